import Contracts
import Foundation
import Outbox
import Persistence
import PostgresNIO

/// The SQL of marking occurrences in batches (see ``CompletionBatch``).
extension AlarmStore {
    /// An alarm a mark is about, locked, with what marking needs besides the row.
    struct MarkTarget: Sendable {
        var alarm: Alarm
        var ownerTier: Tier
        /// The pending window of the alarm's group, if it sets one.
        var missedWindowMinutes: Int?
        /// The display name of the user who marks.
        var actorName: String?
    }

    /// Row-locks the alarms of a batch of marks, in id order (so two batches never wait for each
    /// other in a cycle), with each owner's tier and each actor's display name, in one round
    /// trip. Keyed by the position of the (alarm, actor) pair; an alarm that does not exist has
    /// no entry.
    func lockForMarks(alarmIds: [String], actors: [String], on c: PostgresConnection) async throws -> [Int: MarkTarget] {
        let rows = try await c.prepared("""
            SELECT \(unescaped: AlarmRow.columns), (SELECT tier FROM user_tiers WHERE user_id = alarms.owner_id),
                (SELECT display_name FROM users WHERE user_id = x.actor_ref), x.n,
                (SELECT pending_window_minutes FROM groups WHERE id = alarms.group_id)
            FROM unnest(\(alarmIds)::text[], \(actors)::text[]) WITH ORDINALITY AS x(alarm_ref, actor_ref, n)
            JOIN alarms ON alarms.id = x.alarm_ref
            ORDER BY alarms.id FOR UPDATE OF alarms
            """, logger: logger)
        var targets: [Int: MarkTarget] = [:]
        for try await row in rows {
            let r = row.makeRandomAccess()
            let tier = try r[AlarmRow.count].decode(String?.self).flatMap(Tier.init(rawValue:)) ?? .free
            let position = Int(try r[AlarmRow.count + 2].decode(Int64.self)) - 1
            targets[position] = MarkTarget(alarm: try AlarmRow.decode(row), ownerTier: tier,
                                           missedWindowMinutes: try r[AlarmRow.count + 3].decode(Int32?.self).map(Int.init),
                                           actorName: try r[AlarmRow.count + 1].decode(String?.self))
        }
        return targets
    }

    /// The logs that already exist for these (alarm, occurrence) pairs, and those with these
    /// `ids` (a retried request's log). Exact when the alarms are locked: every log is written
    /// under its alarm's lock.
    func completions(of alarmIds: [String], at occurrences: [Date], ids: [String] = [], on c: PostgresConnection) async throws -> [Completion] {
        guard !alarmIds.isEmpty || !ids.isEmpty else { return [] }
        // Two index lookups (an OR of the two would scan the table); a log found by both comes twice.
        return try await Self.decodeCompletions(c.prepared("""
            SELECT \(unescaped: Self.completionColumns) FROM completions
            WHERE (alarm_id, scheduled_date) IN (SELECT * FROM unnest(\(alarmIds)::text[], \(occurrences)::timestamptz[]))
            UNION ALL
            SELECT \(unescaped: Self.completionColumns) FROM completions WHERE id = ANY(\(ids)::text[])
            """, logger: logger))
    }

    /// Writes a batch of marks in one statement: the new logs (or, for a late mark, the `missed`
    /// log it replaces, changed in place), what they change on their alarms (dates, activity,
    /// snooze state, version; one row per alarm), their events and the feed (last, as
    /// ``bumpFeed(_:on:)``). Returns how many logs were written: fewer than given means an
    /// occurrence was marked meanwhile, and the caller must roll back.
    func recordMarks(_ logs: [Completion], alarms: [Alarm], events: OutboxRows, feed: [FeedChange],
                     on c: PostgresConnection) async throws -> Int {
        let never = Date(timeIntervalSince1970: 0)
        let rows = try await c.prepared("""
            WITH inserted AS (
                INSERT INTO completions (id, alarm_id, user_id, user_display_name, status, scheduled_date, completed_at, note, on_time, created_at,
                    snooze_count, late_at)
                SELECT id, alarm_id, user_id, CASE WHEN has_name THEN name END, status, scheduled_date, completed_at,
                    CASE WHEN has_note THEN note END, on_time, created_at, snooze_count, CASE WHEN has_late THEN late END
                FROM unnest(\(logs.map(\.id))::text[], \(logs.map(\.alarmId))::text[], \(logs.map { $0.userId ?? "" })::text[],
                    \(logs.map { $0.userDisplayName ?? "" })::text[], \(logs.map { $0.userDisplayName != nil })::boolean[],
                    \(logs.map(\.status.rawValue))::text[], \(logs.map(\.scheduledDate))::timestamptz[], \(logs.map(\.completedAt))::timestamptz[],
                    \(logs.map { $0.note ?? "" })::text[], \(logs.map { $0.note != nil })::boolean[], \(logs.map(\.onTime))::boolean[],
                    \(logs.map(\.createdAt))::timestamptz[], \(logs.map { Int32($0.snoozeCount) })::integer[],
                    \(logs.map { $0.lateAt ?? never })::timestamptz[], \(logs.map { $0.lateAt != nil })::boolean[])
                    AS t(id, alarm_id, user_id, name, has_name, status, scheduled_date, completed_at, note, has_note, on_time, created_at,
                        snooze_count, late, has_late)
                ON CONFLICT (alarm_id, scheduled_date) DO UPDATE
                SET user_id = excluded.user_id, user_display_name = excluded.user_display_name, status = excluded.status,
                    completed_at = excluded.completed_at, note = excluded.note, on_time = excluded.on_time, late_at = excluded.late_at
                -- Only a late mark over an unmarked log (its id kept); any other conflict is a mark made meanwhile.
                WHERE excluded.late_at IS NOT NULL AND completions.id = excluded.id
                    AND completions.status IN ('missed', 'snoozed_expired')
                RETURNING 1
            ), marked AS (
                UPDATE alarms SET last_completed_date = CASE WHEN u.has_completed THEN u.completed END,
                    next_fire_date = CASE WHEN u.has_next THEN u.next END, is_active = u.active, version = u.version, updated_at = u.updated,
                    snoozed_until = CASE WHEN u.has_snoozed THEN u.snoozed END, snooze_count = u.snoozes
                FROM unnest(\(alarms.map(\.id))::text[], \(alarms.map { $0.lastCompletedDate ?? never })::timestamptz[],
                    \(alarms.map { $0.lastCompletedDate != nil })::boolean[], \(alarms.map { $0.nextFireDate ?? never })::timestamptz[],
                    \(alarms.map { $0.nextFireDate != nil })::boolean[], \(alarms.map(\.isActive))::boolean[],
                    \(alarms.map { Int32($0.version) })::integer[], \(alarms.map(\.updatedAt))::timestamptz[],
                    \(alarms.map { $0.snoozedUntil ?? never })::timestamptz[], \(alarms.map { $0.snoozedUntil != nil })::boolean[],
                    \(alarms.map { Int32($0.snoozeCount) })::integer[])
                    AS u(id, completed, has_completed, next, has_next, active, version, updated, snoozed, has_snoozed, snoozes)
                WHERE alarms.id = u.id
            ), events AS (\(outboxInsert: events)), \(feedBump: FeedRows(feed))
            SELECT count(*)::integer FROM inserted
            """, logger: logger)
        return Int(try await rows.first(Int32.self) ?? 0)
    }
}
