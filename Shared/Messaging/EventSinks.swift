import Foundation
import ZMQ

/// Where a relay sends the events it has numbered.
public protocol EventSink: Sendable {
    /// Sends events of `stream` in ascending `seq`.
    func publish(stream: String, events: [(seq: Int64, envelope: Data)])
    /// Tells consumers the head of `stream`, so a lost last event is noticed.
    func heartbeat(stream: String, head: Int64)
}

/// Publishes on a bound PUB socket (stable producers); subscribers connect.
public final class PubEventSink: EventSink {
    private let socket: SocketActor

    /// Binds a PUB socket to `binds`; only the readers of stream `name` (``StreamReaders``)
    /// complete the CURVE handshake.
    public init(context: ZMQContext, name: String, binds: [String]) throws {
        var options = SocketOptions(type: .pub)
        options.binds = binds
        options.curve = .server
        options.zapDomain = StreamReaders.zapDomain(name)
        options.sendHighWaterMark = 500_000
        options.lingerMilliseconds = 0
        socket = try SocketActor(context: context, options: options, name: "pub:\(name)")
    }

    /// The bound endpoints.
    public var endpoints: [String] { socket.boundEndpoints }

    public func publish(stream: String, events: [(seq: Int64, envelope: Data)]) {
        for e in events { socket.send(EventFrames.event(stream: stream, seq: e.seq, envelope: e.envelope)) }
    }

    public func heartbeat(stream: String, head: Int64) {
        socket.send(EventFrames.heartbeat(stream: stream, head: head))
    }

    /// Closes the socket.
    public func close() async { await socket.close() }
}

/// Pushes events as one-way `events.push` messages to the RPC endpoints of known consumers:
/// for a scaled producer (the scheduler), whose replicas connect to stable consumers.
public final class PushEventSink: EventSink {
    private let clients: [RPCClient]
    private let batchSize: Int
    private let telemetry: Telemetry?

    /// `batchSize`: the most events per message; a message that would pass a client's frame
    /// limit is split, and an event that alone would pass it goes as a heartbeat (its consumers
    /// then replay it), counted in `chronir_events_push_oversized_total`.
    public init(clients: [RPCClient], batchSize: Int = 500, telemetry: Telemetry? = nil) {
        self.clients = clients
        self.batchSize = batchSize
        self.telemetry = telemetry
    }

    public func publish(stream: String, events: [(seq: Int64, envelope: Data)]) {
        var start = 0
        while start < events.count {
            let slice = events[start..<min(events.count, start + batchSize)]
            start += batchSize
            send(stream: stream, Array(slice))
        }
    }

    public func heartbeat(stream: String, head: Int64) {
        guard let payload = try? JSONCoding.encode(EventBatch(stream: stream, head: head, firstAvailable: 0, events: [])) else { return }
        for client in clients { send(payload, to: client, stream: stream) }
    }

    /// Sends `events` in one message to each client, or in halves where that one would pass
    /// the client's frame limit (room left for the envelope around it).
    private func send(stream: String, _ events: [(seq: Int64, envelope: Data)]) {
        guard let last = events.last else { return }
        let batch = EventBatch(stream: stream, head: last.seq, firstAvailable: 0,
                               events: events.map { EventRecord(seq: $0.seq, envelope: String(decoding: $0.envelope, as: UTF8.self)) })
        guard let payload = try? JSONCoding.encode(batch) else { return }
        let limit = (clients.map(\.frameLimit).min() ?? Int.max) - (8 << 10)
        if payload.count <= limit {
            for client in clients { send(payload, to: client, stream: stream) }
        } else if events.count > 1 {
            send(stream: stream, Array(events[..<(events.count / 2)]))
            send(stream: stream, Array(events[(events.count / 2)...]))
        } else {
            telemetry?.counter("chronir_events_push_oversized_total", [("stream", stream)]).increment()
            telemetry?.logger.warning("event too large to push; sent as a heartbeat, consumers replay it",
                                      metadata: ["stream": "\(stream)", "seq": "\(last.seq)", "bytes": "\(payload.count)"])
            heartbeat(stream: stream, head: last.seq)
        }
    }

    private func send(_ payload: Data, to client: RPCClient, stream: String) {
        do {
            try client.sendOneWay(type: EventMethods.push, payload: payload)
        } catch {
            telemetry?.counter("chronir_events_push_failed_total", [("stream", stream)]).increment()
        }
    }
}
