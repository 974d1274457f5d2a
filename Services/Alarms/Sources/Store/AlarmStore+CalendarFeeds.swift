import Contracts
import Foundation
import Persistence
import PostgresNIO

/// The SQL of subscribable calendar feeds (``CalendarFeedHandlers``): only a token's SHA-256 is
/// stored, never the token.
extension AlarmStore {
    /// How many calendar feeds `user` keeps.
    func calendarFeedCount(of user: String, on c: PostgresConnection) async throws -> Int {
        try await c.query("SELECT count(*)::int FROM calendar_feeds WHERE user_id = \(user)", logger: logger).first(Int.self) ?? 0
    }

    /// Creates a calendar feed of `user` whose token hashes to `tokenHash`; returns when it was
    /// created.
    func insertCalendarFeed(id: String, tokenHash: String, user: String, scope: String, groupId: String?,
                            on c: PostgresConnection) async throws -> Date {
        try await c.query("""
            INSERT INTO calendar_feeds (id, token_hash, user_id, scope, group_id) VALUES (\(id), \(tokenHash), \(user), \(scope), \(groupId))
            RETURNING created_at
            """, logger: logger).first(Date.self) ?? Date()
    }

    /// `user`'s calendar feeds, oldest first (without their tokens).
    func calendarFeeds(of user: String) async throws -> [CalendarFeed] {
        let rows = try await database.query("""
            SELECT id, scope, group_id, created_at, last_fetched_at FROM calendar_feeds WHERE user_id = \(user) ORDER BY created_at, id
            """)
        var feeds: [CalendarFeed] = []
        for try await (id, scope, group, created, fetched) in rows.decode((String, String, String?, Date, Date?).self) {
            feeds.append(CalendarFeed(id: id, scope: scope, groupId: group, createdAt: created, lastFetchedAt: fetched))
        }
        return feeds
    }

    /// Deletes `user`'s calendar feed `id`; false when they have no such feed.
    func deleteCalendarFeed(_ id: String, of user: String) async throws -> Bool {
        let rows = try await database.query("DELETE FROM calendar_feeds WHERE id = \(id) AND user_id = \(user) RETURNING id")
        return try await rows.first(String.self) != nil
    }

    /// Marks the feed whose token hashes to `tokenHash` fetched now; returns its owner, scope and
    /// group, or nil when there is no such feed.
    func touchCalendarFeed(tokenHash: String, on c: PostgresConnection) async throws -> (user: String, scope: String, groupId: String?)? {
        let feed = try await c.query("""
            UPDATE calendar_feeds SET last_fetched_at = now() WHERE token_hash = \(tokenHash) RETURNING user_id, scope, group_id
            """, logger: logger).decode((String, String, String?).self)
        var found: (user: String, scope: String, groupId: String?)?
        for try await (user, scope, group) in feed { found = (user, scope, group) }
        return found
    }

    /// Deletes the user's feeds made before `at` (an account taken back by its owner).
    func deleteCalendarFeeds(of user: String, madeBefore at: Date, on c: PostgresConnection) async throws {
        try await c.query("DELETE FROM calendar_feeds WHERE user_id = \(user) AND created_at < \(at)", logger: logger)
    }
}
