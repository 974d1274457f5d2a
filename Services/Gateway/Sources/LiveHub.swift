import Contracts
import Foundation
import Messaging
import Synchronization
import Tracing

/// The gateway's live connections (`GET /v1/me/events`) by user, fed by the notifications event
/// stream. It follows the stream from its head at start (what happened before is read from the
/// inbox on connect), detecting gaps and replaying like every consumer; held in memory.
final class LiveHub: EventApplier {
    /// What a connection receives.
    enum Item: Sendable {
        case notification(InboxNotification)
        case ping
    }

    private let connections = Mutex<[String: [UInt64: AsyncStream<Item>.Continuation]]>([:])
    private let nextID = Atomic<UInt64>(0)
    private let start = Mutex<Int64?>(nil)
    private let notifications: RPCClient
    private let telemetry: Telemetry

    init(notifications: RPCClient, telemetry: Telemetry) {
        self.notifications = notifications
        self.telemetry = telemetry
    }

    /// Live connections now.
    var count: Int { connections.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    /// Registers a connection of `user`; the stream ends when ``unregister(_:user:)`` is called.
    func register(user: String) -> (id: UInt64, stream: AsyncStream<Item>) {
        let (stream, continuation) = AsyncStream<Item>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        connections.withLock { $0[user, default: [:]][id] = continuation }
        return (id, stream)
    }

    func unregister(_ id: UInt64, user: String) {
        let c = connections.withLock { all -> AsyncStream<Item>.Continuation? in
            let c = all[user]?.removeValue(forKey: id)
            if all[user]?.isEmpty == true { all[user] = nil }
            return c
        }
        c?.finish()
    }

    /// Sends a keep-alive to every connection (proxies close silent connections).
    func ping() {
        let all = connections.withLock { $0.values.flatMap(\.values) }
        for c in all { c.yield(.ping) }
    }

    func checkpoint(stream: String) async throws -> Int64 {
        if let s = start.withLock({ $0 }) { return s }
        let head = try await notifications.call(NotificationsMethods.Head.self, Empty(), timeout: .seconds(3)).head
        start.withLock { $0 = head }
        return head
    }

    func apply(stream: String, events: [DeliveredEvent]) async throws {
        for e in events where e.envelope.type == NotificationsEvents.notificationCreated {
            guard let n = try? e.envelope.decodePayload(NotificationsEvents.NotificationCreated.self).notification else { continue }
            // The last hop of a traced message: handed to the user's live connections.
            let span = telemetry.startProcessSpan(e.envelope, destination: "gateway.live", kind: .consumer)
            let targets = connections.withLock { Array(($0[n.userId] ?? [:]).values) }
            for c in targets { c.yield(.notification(n)) }
            if span.isRecording { span.attributes["chronir.live.connections"] = targets.count }
            span.end()
        }
    }

    func deadLetter(stream: String, seq: Int64, type: String?, raw: String, reason: String) async throws {}

    func skip(stream: String, to seq: Int64, reason: String) async throws {}
}
