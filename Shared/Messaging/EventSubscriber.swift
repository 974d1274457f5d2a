import Foundation
import Logging
import ServiceLifecycle
import ZMQ

/// Receives the live events of one producer's PUB socket and hands them to the
/// ``StreamConsumer`` of each stream; runs those consumers.
///
/// Subscribe first, then replay (each consumer replays at start): nothing published in
/// between is missed, and whatever arrives twice is dropped by sequence number.
public final class EventSubscriber: Service, Sendable {
    private let socket: SocketActor?
    private let consumers: [String: StreamConsumer]
    private let telemetry: Telemetry
    private let producer: String

    /// Connects a SUB socket to `endpoints` (none for consumers fed by `events.push`) and
    /// subscribes to the streams of `consumers`.
    public init(context: ZMQContext, name: String, endpoints: [String], consumers: [StreamConsumer], telemetry: Telemetry) throws {
        self.consumers = Dictionary(uniqueKeysWithValues: consumers.map { ($0.stream, $0) })
        self.telemetry = telemetry
        self.producer = name
        if endpoints.isEmpty {
            socket = nil
        } else {
            var options = SocketOptions(type: .sub)
            options.connects = endpoints
            options.curve = .client(server: name)
            options.subscriptions = consumers.map { Data($0.stream.utf8) }
            options.lingerMilliseconds = 0
            socket = try SocketActor(context: context, options: options, name: "sub:\(name)")
        }
    }

    /// Feeds a batch pushed by a producer (`events.push`).
    public func accept(_ batch: EventBatch) {
        guard let consumer = consumers[batch.stream] else {
            telemetry.counter("chronir_messages_rejected_total", [("reason", "unknown_stream"), ("socket", "events")]).increment()
            return
        }
        for e in batch.events { consumer.deliver(seq: e.seq, envelope: Data(e.envelope.utf8)) }
        consumer.observeHead(batch.head)
    }

    /// Registers the `events.push` handler that feeds this subscriber (accepted on a secured
    /// bus only from the producer's principal).
    public func register(in router: inout RPCRouter) {
        router.onOneWay(EventMethods.push, access: .principals([producer])) { [self] context in
            let batch = try context.envelope.decodePayload(EventBatch.self)
            self.accept(batch)
        }
    }

    /// Runs the consumers and the SUB reader until graceful shutdown.
    public func run() async throws {
        let work = Task {
            await withDiscardingTaskGroup { group in
                for consumer in consumers.values {
                    group.addTask { await consumer.run() }
                }
                if let socket {
                    group.addTask { await self.read(socket) }
                }
            }
        }
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await work.value
            } onGracefulShutdown: {
                for c in self.consumers.values { c.stop() }
                self.socket?.finishMessages()
                // A consumer waiting on a producer that is gone (a replay request) is cancelled
                // after a second; what it applies is transactional, so nothing is half done.
                Task {
                    try? await Task.sleep(for: .seconds(1))
                    work.cancel()
                }
            }
        } onCancel: {
            work.cancel()
        }
        await socket?.close()
    }

    private func read(_ socket: SocketActor) async {
        for await message in socket.messages {
            guard message.oversizedBytes == nil, let parsed = EventFrames.parse(message.frames) else {
                telemetry.counter("chronir_messages_rejected_total", [("reason", "malformed"), ("socket", "sub")]).increment()
                telemetry.logger.warning("dropped a malformed event message", metadata: ["frames": "\(message.frames.count)"])
                continue
            }
            switch parsed {
            case .event(let stream, let seq, let envelope):
                consumers[stream]?.deliver(seq: seq, envelope: envelope)
            case .heartbeat(let stream, let head):
                consumers[stream]?.observeHead(head)
            }
        }
    }
}
