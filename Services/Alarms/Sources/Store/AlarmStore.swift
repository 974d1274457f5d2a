import Contracts
import Foundation
import Logging
import Outbox
import Messaging
import Persistence
import PostgresNIO

/// SQL of the alarms schema.
struct AlarmStore: Sendable {
    let database: Database
    var logger: Logger { database.logger }

    // MARK: Alarms

    func load(_ id: String, on c: PostgresConnection) async throws -> Alarm? {
        let rows = try await c.prepared("SELECT \(unescaped: AlarmRow.columns) FROM alarms WHERE id = \(id)", logger: logger)
        return try await AlarmRow.decodeAll(rows).first
    }

    func load(_ id: String) async throws -> Alarm? {
        try await AlarmRow.decodeAll(database.prepared("SELECT \(unescaped: AlarmRow.columns) FROM alarms WHERE id = \(id)")).first
    }

    /// Loads and row-locks an alarm for the rest of the transaction.
    func lock(_ id: String, on c: PostgresConnection) async throws -> Alarm? {
        let rows = try await c.prepared("SELECT \(unescaped: AlarmRow.columns) FROM alarms WHERE id = \(id) FOR UPDATE", logger: logger)
        return try await AlarmRow.decodeAll(rows).first
    }

    /// The fingerprint of the body that created an alarm.
    func fingerprint(_ id: String, on c: PostgresConnection) async throws -> (owner: String, fingerprint: String)? {
        let rows = try await c.prepared("SELECT owner_id, create_fingerprint FROM alarms WHERE id = \(id)", logger: logger)
        for try await row in rows { return try row.decode((String, String).self) }
        return nil
    }

    func insert(_ a: Alarm, fingerprint: String, on c: PostgresConnection) async throws {
        let schedule = String(decoding: try JSONCoding.encode(a.schedule), as: UTF8.self)
        try await c.query("""
            INSERT INTO alarms (id, owner_id, title, note, photo_url, photo_local_path, category, schedule, schedule_type, sound_id,
                vibration_enabled, snooze_duration_minutes, pre_alarm_warning_enabled, pre_alarm_warning_hours, pre_alarm_offsets,
                require_dismiss_action, is_active, is_paused, next_fire_date, shared_with, group_id, assigned_to, create_fingerprint,
                created_at, updated_at, version, max_snooze_count)
            VALUES (\(a.id), \(a.ownerId), \(a.title), \(a.note), \(a.photoURL), \(a.photoLocalPath), \(a.category), \(schedule)::jsonb,
                \(a.schedule.type), \(a.soundId), \(a.vibrationEnabled), \(Int32(a.snoozeDurationMinutes)), \(a.preAlarmWarningEnabled),
                \(Int32(a.preAlarmWarningHours)), \(a.preAlarmOffsets), \(a.requireDismissAction), \(a.isActive), \(a.isPaused),
                \(a.nextFireDate), \(a.sharedWith), \(a.groupId), \(a.assignedTo), \(fingerprint), \(a.createdAt), \(a.updatedAt),
                \(Int32(a.version)), \(Int32(a.maxSnoozeCount)))
            """, logger: logger)
    }

    /// Writes every mutable column of `a` (its version already incremented).
    func update(_ a: Alarm, on c: PostgresConnection) async throws {
        let schedule = String(decoding: try JSONCoding.encode(a.schedule), as: UTF8.self)
        try await c.query("""
            UPDATE alarms SET title = \(a.title), note = \(a.note), photo_url = \(a.photoURL), photo_local_path = \(a.photoLocalPath),
                category = \(a.category), schedule = \(schedule)::jsonb, schedule_type = \(a.schedule.type), sound_id = \(a.soundId),
                vibration_enabled = \(a.vibrationEnabled), snooze_duration_minutes = \(Int32(a.snoozeDurationMinutes)),
                pre_alarm_warning_enabled = \(a.preAlarmWarningEnabled), pre_alarm_warning_hours = \(Int32(a.preAlarmWarningHours)),
                pre_alarm_offsets = \(a.preAlarmOffsets), require_dismiss_action = \(a.requireDismissAction), is_active = \(a.isActive),
                is_paused = \(a.isPaused), next_fire_date = \(a.nextFireDate), last_fired_date = \(a.lastFiredDate),
                last_completed_date = \(a.lastCompletedDate), shared_with = \(a.sharedWith), group_id = \(a.groupId),
                assigned_to = \(a.assignedTo), max_snooze_count = \(Int32(a.maxSnoozeCount)), snoozed_until = \(a.snoozedUntil),
                snooze_count = \(Int32(a.snoozeCount)), updated_at = \(a.updatedAt), deleted_at = \(a.deletedAt), version = \(Int32(a.version))
            WHERE id = \(a.id)
            """, logger: logger)
    }

    /// Serializes writes of one owner's alarms (limits and rate limits are per owner).
    func lockOwner(_ owner: String, on c: PostgresConnection) async throws {
        let key = "alarms.owner.\(owner)"
        try await c.lockUntilCommit(key, logger: logger)
    }

    func countActive(owner: String, excluding id: String? = nil, on c: PostgresConnection) async throws -> Int {
        let rows = try await c.prepared("""
            SELECT count(*)::int FROM alarms WHERE owner_id = \(owner) AND is_active AND deleted_at IS NULL AND id <> \(id ?? "")
            """, logger: logger)
        return try await rows.first(Int.self) ?? 0
    }

    /// The alarms `owner` holds, active or not (deleted ones not counted).
    func countStored(owner: String, on c: PostgresConnection) async throws -> Int {
        try await c.prepared("""
            SELECT count(*)::int FROM alarms WHERE owner_id = \(owner) AND deleted_at IS NULL
            """, logger: logger).first(Int.self) ?? 0
    }

    /// Creations by `owner` within the last `window` seconds and the oldest of them.
    func recentCreations(owner: String, window: Int, on c: PostgresConnection) async throws -> (count: Int, oldest: Date?) {
        let rows = try await c.prepared("""
            SELECT count(*)::int, min(created_at) FROM alarms WHERE owner_id = \(owner) AND created_at > now() - make_interval(secs => \(window))
            """, logger: logger)
        for try await (n, oldest) in rows.decode((Int, Date?).self) { return (n, oldest) }
        return (0, nil)
    }

    // MARK: Read models

    func tier(of user: String, on c: PostgresConnection) async throws -> Tier {
        let rows = try await c.prepared("SELECT tier FROM user_tiers WHERE user_id = \(user)", logger: logger)
        return try await rows.first(String.self).flatMap(Tier.init(rawValue:)) ?? .free
    }

    func displayName(of user: String, on c: PostgresConnection) async throws -> String? {
        try await c.query("SELECT display_name FROM users WHERE user_id = \(user)", logger: logger).first(String.self)
    }

    /// The display names of those of `users` the read model knows, by user id.
    func displayNames(of users: [String], on c: PostgresConnection) async throws -> [String: String] {
        var names: [String: String] = [:]
        for try await (uid, name) in try await c.query("SELECT user_id, display_name FROM users WHERE user_id = ANY(\(users)::text[])",
                                                        logger: logger).decode((String, String).self) { names[uid] = name }
        return names
    }

    /// The tiers of those of `users` the read model knows, by user id (an unknown tier name
    /// leaves its user out).
    func tiers(of users: [String], on c: PostgresConnection) async throws -> [String: Tier] {
        var tiers: [String: Tier] = [:]
        for try await (uid, tier) in try await c.query("SELECT user_id, tier FROM user_tiers WHERE user_id = ANY(\(users)::text[])",
                                                        logger: logger).decode((String, String).self) { tiers[uid] = Tier(rawValue: tier) }
        return tiers
    }

    func groupRole(group: String, user: String, on c: PostgresConnection) async throws -> GroupRole? {
        try await c.query("SELECT role FROM group_members WHERE group_id = \(group) AND user_id = \(user)", logger: logger)
            .first(String.self).flatMap(GroupRole.init(rawValue:))
    }

    /// Whether the copy of the accounts stream lists `user` in `group` with a role this release
    /// knows (read outside a transaction).
    func listsMember(group: String, user: String) async throws -> Bool {
        try await database.query("SELECT role FROM group_members WHERE group_id = \(group) AND user_id = \(user)")
            .first(String.self).flatMap(GroupRole.init(rawValue:)) != nil
    }

    func groupMembers(group: String, on c: PostgresConnection) async throws -> [String] {
        try await c.query("SELECT user_id FROM group_members WHERE group_id = \(group) ORDER BY user_id", logger: logger).all(String.self)
    }

    // MARK: The delta feed

    /// Records several alarms' changes with one statement. Each user's head moves by the number
    /// of their alarms that changed and the alarms take the numbers in between; heads are locked
    /// in user order, so numbers are assigned in commit order per user and a cursor never skips
    /// one. Call it last in a transaction: the heads stay locked until the commit.
    func bumpFeed(_ changes: [FeedChange], on c: PostgresConnection) async throws {
        let rows = FeedRows(changes)
        guard !rows.users.isEmpty else { return }
        try await c.prepared("WITH \(feedBump: rows) SELECT 1", logger: logger)
    }

    /// Writes events and the feed of a change in one statement (the feed last, as
    /// ``bumpFeed(_:on:)``).
    func record(events: OutboxRows, feed: [FeedChange], on c: PostgresConnection) async throws {
        try await c.prepared("WITH events AS (\(outboxInsert: events)), \(feedBump: FeedRows(feed)) SELECT 1", logger: logger)
    }
}

/// One alarm's change for the delta feed: who saw it before, who sees it now.
struct FeedChange: Sendable {
    var alarmId: String
    var before: [String]
    var after: [String]
    var deleted: Bool
}

/// Feed changes as the columns of one statement: a user and alarm per row.
struct FeedRows: Sendable {
    var users: [String] = [], alarms: [String] = [], removed: [Bool] = []

    init(_ changes: [FeedChange]) {
        for change in changes {
            let now = Set(change.after)
            for u in Set(change.before).union(change.after) {
                users.append(u)
                alarms.append(change.alarmId)
                removed.append(change.deleted || !now.contains(u))
            }
        }
    }
}

extension PostgresQuery.StringInterpolation {
    /// The common table expressions that bump the feed for `rows` (after `WITH ` or `, `):
    /// each user's head moves by the number of their alarms that changed and the alarms take
    /// the numbers in between; heads are locked in user order.
    mutating func appendInterpolation(feedBump rows: FeedRows) {
        appendLiteral("feed_x AS (SELECT DISTINCT ON (u, a) u, a, r FROM unnest(")
        appendInterpolation(rows.users)
        appendLiteral("::text[], ")
        appendInterpolation(rows.alarms)
        appendLiteral("::text[], ")
        appendInterpolation(rows.removed)
        appendLiteral("""
            ::boolean[]) WITH ORDINALITY AS t(u, a, r, n) ORDER BY u, a, n DESC),
            feed_numbered AS (
                SELECT u, a, r, row_number() OVER (PARTITION BY u ORDER BY a) AS k, count(*) OVER (PARTITION BY u) AS n FROM feed_x
            ), feed_bumped AS (
                INSERT INTO feed_heads (user_id, last_seq) SELECT u, max(n) FROM feed_numbered GROUP BY u ORDER BY u
                ON CONFLICT (user_id) DO UPDATE SET last_seq = feed_heads.last_seq + excluded.last_seq
                RETURNING user_id, last_seq
            ), feed_written AS (
                INSERT INTO feed_entries (user_id, alarm_id, seq, removed)
                SELECT x.u, x.a, b.last_seq - x.n + x.k, x.r FROM feed_numbered x JOIN feed_bumped b ON b.user_id = x.u
                ON CONFLICT (user_id, alarm_id) DO UPDATE SET seq = excluded.seq, removed = excluded.removed
            )
            """)
    }
}
