import Contracts
import Foundation
import Logging
import Messaging
import Persistence
import PostgresNIO

/// The SQL of photos: `photos` (one row per alarm with a photo: its key, type, tag, size) and
/// `photo_deletions` (keys whose bytes are to be removed from the storage, each not before its
/// time). A trigger on `alarms` moves a deleted alarm's photo to `photo_deletions` in the same
/// transaction, whatever deletes it (the owner, a purge of the account).
struct PhotoStore: Sendable {
    struct Row: Sendable {
        var key: String
        var type: PhotoType
        var etag: String
        var size: Int
        var updatedAt: Date
    }

    let database: Database
    var logger: Logger { database.logger }

    func photo(of alarm: String) async throws -> Row? {
        try await Self.decode(database.query("""
            SELECT object_key, content_type, etag, size, updated_at FROM photos WHERE alarm_id = \(alarm)
            """))
    }

    func lockPhoto(of alarm: String, on c: PostgresConnection) async throws -> Row? {
        try await Self.decode(c.query("""
            SELECT object_key, content_type, etag, size, updated_at FROM photos WHERE alarm_id = \(alarm) FOR UPDATE
            """, logger: logger))
    }

    /// Counts one upload by `user`, or refuses it with `CA019` (and when to try again) when
    /// they made `perMinute` in the last minute. Serialized per user, so concurrent uploads on
    /// several replicas cannot slip past together; rows older than a minute go as it counts.
    func admitUpload(by user: String, perMinute: Int, now: Date = Date(), on c: PostgresConnection) async throws {
        let key = "alarms.photo-uploads.\(user)"
        try await c.lockUntilCommit(key, logger: logger)
        let since = now.addingTimeInterval(-60)
        try await c.query("DELETE FROM photo_uploads WHERE user_id = \(user) AND at <= \(since)", logger: logger)
        var recent: [Date] = []
        for try await at in try await c.query("SELECT at FROM photo_uploads WHERE user_id = \(user) ORDER BY at", logger: logger).decode(Date.self) {
            recent.append(at)
        }
        if let wait = WindowLimit(perMinute, per: 60).retryAfter(count: recent.count, oldest: recent.first, now: now) {
            throw ServiceError.rateLimited("at most \(perMinute) photo uploads a minute; try again in \(wait) s", retryAfter: wait)
        }
        try await c.query("INSERT INTO photo_uploads (user_id, at) VALUES (\(user), \(now))", logger: logger)
    }

    private static func decode(_ rows: PostgresRowSequence) async throws -> Row? {
        for try await (key, type, etag, size, at) in rows.decode((String, String, String, Int32, Date).self) {
            return Row(key: key, type: PhotoType(rawValue: type) ?? .jpeg, etag: etag, size: Int(size), updatedAt: at)
        }
        return nil
    }

    /// Keeps `key` out of the storage unless a commit claims it: queued for removal after
    /// `grace`, so bytes stored by an upload that never commits (a crash, a refusal) go away.
    /// Waits for a sweep that is removing the same key.
    func reserve(_ key: String, grace: Duration) async throws {
        try await database.query("""
            INSERT INTO photo_deletions (object_key, not_before) VALUES (\(key), now() + make_interval(secs => \(Double(grace.components.seconds))))
            ON CONFLICT (object_key) DO UPDATE SET not_before = EXCLUDED.not_before
            """).drain()
    }

    /// Makes `row` alarm `alarm`'s photo (claiming its key) and queues the replaced key, if any.
    func set(_ row: Row, alarm: String, owner: String, replacing old: Row?, on c: PostgresConnection) async throws {
        try await c.query("""
            INSERT INTO photos (alarm_id, owner_id, object_key, content_type, etag, size, updated_at)
            VALUES (\(alarm), \(owner), \(row.key), \(row.type.rawValue), \(row.etag), \(Int32(row.size)), \(row.updatedAt))
            ON CONFLICT (alarm_id) DO UPDATE SET object_key = EXCLUDED.object_key, content_type = EXCLUDED.content_type,
                etag = EXCLUDED.etag, size = EXCLUDED.size, updated_at = EXCLUDED.updated_at
            """, logger: logger).drain()
        try await c.query("DELETE FROM photo_deletions WHERE object_key = \(row.key)", logger: logger).drain()
        if let old, old.key != row.key { try await queue(old.key, on: c) }
    }

    /// Removes alarm `alarm`'s photo row and queues its key.
    func remove(_ row: Row, alarm: String, on c: PostgresConnection) async throws {
        try await c.query("DELETE FROM photos WHERE alarm_id = \(alarm)", logger: logger).drain()
        try await queue(row.key, on: c)
    }

    private func queue(_ key: String, on c: PostgresConnection) async throws {
        try await c.query("""
            INSERT INTO photo_deletions (object_key) VALUES (\(key)) ON CONFLICT (object_key) DO UPDATE SET not_before = now()
            """, logger: logger).drain()
    }

    /// Removes up to `limit` due keys from `storage`, each in a transaction that holds its
    /// queue row (so an upload of the same bytes waits) and skips keys a photo uses again.
    /// Returns how many objects were removed.
    func sweep(storage: any PhotoStorage, limit: Int = 100) async throws -> Int {
        var removed = 0
        for _ in 0..<limit {
            let done: Bool? = try await database.transaction { c in
                let rows = try await c.query("""
                    SELECT d.object_key, EXISTS (SELECT 1 FROM photos p WHERE p.object_key = d.object_key)
                    FROM photo_deletions d WHERE d.not_before <= now() ORDER BY d.not_before LIMIT 1 FOR UPDATE SKIP LOCKED
                    """, logger: logger).decode((String, Bool).self)
                var next: (String, Bool)?
                for try await row in rows { next = row }
                guard let (key, inUse) = next else { return nil }
                if !inUse { try await storage.delete(key: key) }
                try await c.query("DELETE FROM photo_deletions WHERE object_key = \(key)", logger: logger).drain()
                return !inUse
            }
            guard let done else { break }
            if done { removed += 1 }
        }
        return removed
    }
}
