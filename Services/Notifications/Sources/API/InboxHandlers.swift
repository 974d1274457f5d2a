import Contracts
import Foundation
import Messaging

/// The inbox API (`GET /v1/me/notifications`, acknowledgements), the stream head for live
/// followers, and recent delivery attempts for operators.
struct InboxHandlers: Sendable {
    let store: NotificationStore

    func register(into router: inout RPCRouter) {
        router.on(NotificationsMethods.Inbox.self) { req, ctx in try await inbox(req, user: try ctx.requireActor()) }
        router.on(NotificationsMethods.Ack.self) { req, ctx in try await ack(req.id, user: try ctx.requireActor()) }
        router.on(NotificationsMethods.Head.self) { _, _ in
            let (head, now) = try await store.streamHeadAndClock()
            return .init(head: head ?? 0, databaseNow: now)
        }
        router.on(NotificationsMethods.Attempts.self) { req, _ in try await attempts(req) }
        router.on(NotificationsMethods.Waiting.self) { req, _ in try await waiting(req) }
    }

    func inbox(_ req: NotificationsMethods.Inbox.Request, user: String) async throws -> NotificationsMethods.Inbox.Response {
        let limit = req.limit ?? 100
        guard (1...500).contains(limit) else { throw ServiceError(.validationFailed, "limit must be 1...500") }
        let since = req.since ?? 0
        guard since >= 0 else { throw ServiceError(.validationFailed, "since must be a cursor from an earlier answer") }
        // The store ends the page before an entry waiting for its instant, by the database's
        // clock: one row more than asked for when there is more after this page.
        var items = try await store.inbox(of: user, after: since, rows: limit + 1, silent: req.silent ?? false)
        let more = items.count > limit
        if more { items.removeLast() }
        return .init(notifications: items, nextCursor: items.last?.id ?? since, hasMore: more)
    }

    /// Entries of every user still waiting for their instant (a live follower's start), as
    /// many as `limit` and the asker's `maxBytes` allow: a reply over its frame limit would be
    /// dropped, and the gateway would ask again for ever (2 000 rows of long titles passed 1 MiB).
    func waiting(_ req: NotificationsMethods.Waiting.Request) async throws -> NotificationsMethods.Waiting.Response {
        let limit = min(max(req.limit, 1), 5_000)
        let maxBytes = req.maxBytes ?? (1 << 20)
        guard maxBytes >= 64 << 10 else { throw ServiceError(.validationFailed, "maxBytes must be at least 65536") }
        var items = try await store.waiting(after: req.after, rows: limit + 1)
        var more = items.count > limit
        if more { items.removeLast() }
        let fit = try Self.fitting(items, in: maxBytes - (16 << 10))
        if fit < items.count {
            items.removeSubrange(fit...)
            more = true
        }
        return .init(notifications: items, hasMore: more)
    }

    /// How many of `items`, from the first, fit in `budget` bytes as JSON (at least one, so a
    /// page always moves on; one row is far below any frame limit).
    static func fitting(_ items: [InboxNotification], in budget: Int) throws -> Int {
        var used = 32
        for (i, n) in items.enumerated() {
            used += try JSONCoding.encode(n).count + 1
            if used > budget { return max(1, i) }
        }
        return items.count
    }

    func ack(_ id: Int64, user: String) async throws -> InboxNotification {
        guard let n = try await store.ack(id, user: user) else { throw ServiceError(.notFound, "no notification \(id)") }
        return n
    }

    func attempts(_ req: NotificationsMethods.Attempts.Request) async throws -> NotificationsMethods.Attempts.Response {
        .init(attempts: try await store.attempts(after: req.after, limit: min(max(req.limit, 1), 1000)))
    }
}
