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

    public init(clients: [RPCClient], batchSize: Int = 500) {
        self.clients = clients
        self.batchSize = batchSize
    }

    public func publish(stream: String, events: [(seq: Int64, envelope: Data)]) {
        var start = 0
        while start < events.count {
            let slice = events[start..<min(events.count, start + batchSize)]
            start += batchSize
            let batch = EventBatch(stream: stream, head: slice.last!.seq, firstAvailable: 0,
                                   events: slice.map { EventRecord(seq: $0.seq, envelope: String(decoding: $0.envelope, as: UTF8.self)) })
            send(batch)
        }
    }

    public func heartbeat(stream: String, head: Int64) {
        send(EventBatch(stream: stream, head: head, firstAvailable: 0, events: []))
    }

    private func send(_ batch: EventBatch) {
        guard let payload = try? JSONCoding.encode(batch) else { return }
        for client in clients { try? client.sendOneWay(type: EventMethods.push, payload: payload) }
    }
}

/// Sends to several sinks.
public struct FanOutEventSink: EventSink {
    let sinks: [any EventSink]

    public init(_ sinks: [any EventSink]) {
        self.sinks = sinks
    }

    public func publish(stream: String, events: [(seq: Int64, envelope: Data)]) {
        for s in sinks { s.publish(stream: stream, events: events) }
    }

    public func heartbeat(stream: String, head: Int64) {
        for s in sinks { s.heartbeat(stream: stream, head: head) }
    }
}
