import Contracts
import Foundation
import Messaging
import Persistence
import PostgresNIO

/// The inbox API (`GET /v1/me/notifications`, acknowledgements), the stream head for live
/// followers, and recent delivery attempts for operators.
struct InboxHandlers: Sendable {
    let database: Database

    func register(into router: inout RPCRouter) {
        router.on(NotificationsMethods.Inbox.self) { req, ctx in try await inbox(req, user: try ctx.requireActor()) }
        router.on(NotificationsMethods.Ack.self) { req, ctx in try await ack(req.id, user: try ctx.requireActor()) }
        router.on(NotificationsMethods.Head.self) { _, _ in
            .init(head: try await database.query("SELECT last_seq FROM outbox_streams WHERE stream = 'notifications'").first(Int64.self) ?? 0)
        }
        router.on(NotificationsMethods.Attempts.self) { req, _ in try await attempts(req) }
        router.on(NotificationsMethods.Waiting.self) { req, _ in try await waiting(req) }
    }

    static let columns = "id, user_id, type, title, body, data::text, event_id, created_at, acked_at"

    static func decode(_ rows: PostgresRowSequence) async throws -> [InboxNotification] {
        var out: [InboxNotification] = []
        for try await (id, user, type, title, body, data, event, created, acked)
            in rows.decode((Int64, String, String, String, String, String, String, Date, Date?).self) {
            let map = (try? JSONCoding.decoder().decode([String: String].self, from: Data(data.utf8))) ?? [:]
            out.append(InboxNotification(id: id, userId: user, type: type, title: title, body: body, data: map, eventId: event,
                                         createdAt: created, ackedAt: acked))
        }
        return out
    }

    func inbox(_ req: NotificationsMethods.Inbox.Request, user: String) async throws -> NotificationsMethods.Inbox.Response {
        let limit = req.limit ?? 100
        guard (1...500).contains(limit) else { throw ServiceError(.validationFailed, "limit must be 1...500") }
        let since = req.since ?? 0
        guard since >= 0 else { throw ServiceError(.validationFailed, "since must be a cursor from an earlier answer") }
        // An entry waiting for its instant ends the page, and what follows it waits too: a
        // cursor never passes an entry the client has not been able to see.
        let now = Date()
        var items = try await Self.decode(database.query("""
            SELECT \(unescaped: Self.columns) FROM inbox WHERE user_id = \(user) AND id > \(since) ORDER BY id LIMIT \(limit + 1)
            """))
        var more = items.count > limit
        if more { items.removeLast() }
        if let waiting = items.firstIndex(where: { $0.createdAt > now }) {
            items.removeSubrange(waiting...)
            more = false
        }
        return .init(notifications: items, nextCursor: items.last?.id ?? since, hasMore: more)
    }

    /// Entries of every user still waiting for their instant (a live follower's start).
    func waiting(_ req: NotificationsMethods.Waiting.Request) async throws -> NotificationsMethods.Waiting.Response {
        let limit = min(max(req.limit, 1), 5_000)
        var items = try await Self.decode(database.query("""
            SELECT \(unescaped: Self.columns) FROM inbox WHERE created_at > now() AND id > \(req.after) ORDER BY id LIMIT \(limit + 1)
            """))
        let more = items.count > limit
        if more { items.removeLast() }
        return .init(notifications: items, hasMore: more)
    }

    func ack(_ id: Int64, user: String) async throws -> InboxNotification {
        let rows = try await Self.decode(database.query("""
            UPDATE inbox SET acked_at = coalesce(acked_at, now()) WHERE id = \(id) AND user_id = \(user) RETURNING \(unescaped: Self.columns)
            """))
        guard let n = rows.first else { throw ServiceError(.notFound, "no notification \(id)") }
        return n
    }

    func attempts(_ req: NotificationsMethods.Attempts.Request) async throws -> NotificationsMethods.Attempts.Response {
        let rows = try await database.query("""
            SELECT a.id, a.delivery_id, d.event_id, d.user_id, d.device_id, a.provider, a.attempt, a.status, a.outcome, a.latency_ms, a.error, a.at
            FROM attempts a JOIN deliveries d ON d.id = a.delivery_id
            WHERE a.id > \(req.after) ORDER BY a.id LIMIT \(min(max(req.limit, 1), 1000))
            """)
        var out: [NotificationsMethods.Attempts.Attempt] = []
        for try await (id, delivery, event, user, device, provider, attempt, status, outcome, latency, error, at)
            in rows.decode((Int64, Int64, String, String, String, String, Int32, Int32, String, Double, String?, Date).self) {
            out.append(.init(id: id, deliveryId: delivery, eventId: event, userId: user, deviceId: device, provider: provider,
                             attempt: Int(attempt), status: Int(status), outcome: outcome, latencyMs: latency, error: error, at: at))
        }
        return .init(attempts: out)
    }
}
