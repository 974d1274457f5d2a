import Foundation

/// One published event: its sequence number in its stream and the envelope JSON.
public struct EventRecord: Codable, Sendable, Equatable {
    /// Position in the stream, 1, 2, 3, … without holes.
    public var seq: Int64
    /// The envelope, as its JSON text.
    public var envelope: String

    public init(seq: Int64, envelope: String) {
        self.seq = seq
        self.envelope = envelope
    }
}

/// A run of events of one stream, as a replay answer or a push batch.
public struct EventBatch: Codable, Sendable {
    /// The stream (the producing service's name, e.g. `alarms`).
    public var stream: String
    /// The highest sequence number published in the stream so far.
    public var head: Int64
    /// The oldest sequence number still kept (older ones are past retention).
    public var firstAvailable: Int64
    /// Events in ascending `seq`.
    public var events: [EventRecord]

    public init(stream: String, head: Int64, firstAvailable: Int64, events: [EventRecord]) {
        self.stream = stream
        self.head = head
        self.firstAvailable = firstAvailable
        self.events = events
    }
}

/// Requests every event producer answers.
public enum EventMethods {
    /// `events.replay`: events of `stream` after `after`, at most `limit`.
    public struct Replay: RPCMethod {
        public struct Request: Codable, Sendable {
            public var stream: String
            public var after: Int64
            public var limit: Int
            /// The largest reply the asker takes (its frame limit): the producer sends fewer
            /// than `limit` events rather than a reply the asker would drop. Absent (an older
            /// consumer): 1 MiB, the default limit.
            public var maxBytes: Int?
            public init(stream: String, after: Int64, limit: Int, maxBytes: Int? = nil) {
                self.stream = stream
                self.after = after
                self.limit = limit
                self.maxBytes = maxBytes
            }
        }
        public typealias Response = EventBatch
        public static let type = "events.replay"
        /// Every consumer replays from its producer.
        public static let access = MethodAccess.services
    }

    /// `events.push`: a one-way batch of live events from a producer that connects to its
    /// consumers (the scaled scheduler) instead of publishing on a bound PUB socket.
    public static let push = "events.push"
}

/// The frames of an event on a PUB socket: `[stream, "E", seq, envelope]`, and of a
/// heartbeat that tells subscribers the stream's head: `[stream, "H", head]`.
public enum EventFrames {
    /// Frames for one event.
    public static func event(stream: String, seq: Int64, envelope: Data) -> [Data] {
        [Data(stream.utf8), Data("E".utf8), Data(String(seq).utf8), envelope]
    }

    /// Frames for a heartbeat.
    public static func heartbeat(stream: String, head: Int64) -> [Data] {
        [Data(stream.utf8), Data("H".utf8), Data(String(head).utf8)]
    }

    /// What a received PUB message is.
    public enum Parsed {
        case event(stream: String, seq: Int64, envelope: Data)
        case heartbeat(stream: String, head: Int64)
    }

    /// Parses received frames; nil when they are not an event or a heartbeat.
    public static func parse(_ frames: [Data]) -> Parsed? {
        guard frames.count >= 3, let kind = frames[1].first else { return nil }
        let stream = String(decoding: frames[0], as: UTF8.self)
        guard let number = Int64(String(decoding: frames[2], as: UTF8.self)) else { return nil }
        switch kind {
        case UInt8(ascii: "E") where frames.count == 4: return .event(stream: stream, seq: number, envelope: frames[3])
        case UInt8(ascii: "H"): return .heartbeat(stream: stream, head: number)
        default: return nil
        }
    }
}
