import Contracts
import Foundation
import Logging
import Messaging
import Outbox
import Persistence
import PostgresNIO
import Schedules

/// SQL of the scheduler schema: the alarms read model, the timers table and the fire log.
struct TimerStore: Sendable {
    let database: Database
    let config: SchedulerConfig
    let outbox: OutboxWriter
    let instance: String
    var logger: Logger { database.logger }

    // MARK: Applying alarm changes

    /// Applies an alarm's state (idempotent by version): updates the read model and replaces
    /// the pending timers of the alarm when its occurrence, warnings or activity changed.
    /// `traceparent`: the trace of the change, which the fire will link to.
    func apply(_ s: AlarmsEvents.AlarmState, traceparent: String?, on c: PostgresConnection) async throws {
        let known = try await c.query("""
            SELECT version, next_fire_date, active, offsets FROM alarms WHERE alarm_id = \(s.id) FOR UPDATE
            """, logger: logger)
        var previous: (version: Int32, next: Date?, active: Bool, offsets: [Int32])? = nil
        for try await r in known.decode((Int32, Date?, Bool, [Int32]).self) { previous = (r.0, r.1, r.2, r.3) }
        if let p = previous, p.version >= Int32(s.version) { return }
        let active = s.isActive && !s.isPaused && !s.deleted && s.nextFireDate != nil
        let offsets = s.preAlarmOffsetsMinutes.map(Int32.init)
        let partition = Int32(Partitioning.partition(of: s.id, partitions: config.partitions))
        try await c.query("""
            INSERT INTO alarms (alarm_id, partition, version, owner_id, title, timezone, time_of_day, next_fire_date, active, offsets,
                members, alert_members, group_id, assigned_to, traceparent)
            VALUES (\(s.id), \(partition), \(Int32(s.version)), \(s.ownerId), \(s.title), \(s.schedule.timezone), \(s.schedule.timeOfDay),
                \(s.nextFireDate), \(active), \(offsets), \(s.members), \(s.alertMembers), \(s.groupId), \(s.assignedTo), \(traceparent))
            ON CONFLICT (alarm_id) DO UPDATE SET version = excluded.version, owner_id = excluded.owner_id, title = excluded.title,
                timezone = excluded.timezone, time_of_day = excluded.time_of_day, next_fire_date = excluded.next_fire_date,
                active = excluded.active, offsets = excluded.offsets, members = excluded.members,
                alert_members = excluded.alert_members, group_id = excluded.group_id, assigned_to = excluded.assigned_to,
                traceparent = excluded.traceparent
            """, logger: logger)
        if let p = previous, p.next == s.nextFireDate, p.active == active, p.offsets == offsets { return }
        guard active, let occurrence = s.nextFireDate else {
            try await c.query("DELETE FROM timers WHERE alarm_id = \(s.id)", logger: logger)
            return
        }
        // Timers of other occurrences and dropped warnings go; those of this occurrence stay
        // (same ids, no churn).
        try await c.query("""
            DELETE FROM timers WHERE alarm_id = \(s.id)
                AND (occurrence_at <> \(occurrence) OR (kind = 'pre' AND NOT (offset_minutes = ANY(\(offsets)::int[]))))
            """, logger: logger)
        let now = Date()
        var kinds: [String] = ["fire", "missed"]
        var dues: [Date] = [occurrence, occurrence.addingTimeInterval(config.missedWindow.seconds)]
        var offs: [Int32] = [0, 0]
        for o in offsets where occurrence.addingTimeInterval(-Double(o) * 60) > now {
            kinds.append("pre")
            dues.append(occurrence.addingTimeInterval(-Double(o) * 60))
            offs.append(o)
        }
        try await c.query("""
            INSERT INTO timers (partition, alarm_id, kind, occurrence_at, due_at, offset_minutes)
            SELECT \(partition), \(s.id), k.kind, \(occurrence), k.due, k.off FROM unnest(\(kinds)::text[], \(dues)::timestamptz[], \(offs)::int[]) AS k(kind, due, off)
            WHERE NOT EXISTS (SELECT 1 FROM fires f WHERE f.alarm_id = \(s.id) AND f.kind = k.kind AND f.occurrence_at = \(occurrence)
                              AND f.offset_minutes = k.off AND f.snooze_count = 0)
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    /// An occurrence was completed or skipped: its missed check and pending re-fires go.
    func settle(alarmId: String, occurrence: Date, on c: PostgresConnection) async throws {
        try await c.query("""
            DELETE FROM timers WHERE alarm_id = \(alarmId) AND occurrence_at = \(occurrence) AND kind IN ('missed', 'snooze')
            """, logger: logger)
    }

    /// A snooze: a re-fire at `refireAt`, and the missed check moves past it.
    func snooze(_ e: AlarmsEvents.Snoozed, on c: PostgresConnection) async throws {
        let partition = Int32(Partitioning.partition(of: e.alarm.id, partitions: config.partitions))
        try await c.query("""
            DELETE FROM timers WHERE alarm_id = \(e.alarm.id) AND occurrence_at = \(e.occurrenceAt) AND kind IN ('missed', 'snooze')
            """, logger: logger)
        let missedAt = e.refireAt.addingTimeInterval(config.missedWindow.seconds)
        try await c.query("""
            INSERT INTO timers (partition, alarm_id, kind, occurrence_at, due_at, offset_minutes, snooze_count)
            VALUES (\(partition), \(e.alarm.id), 'snooze', \(e.occurrenceAt), \(e.refireAt), 0, \(Int32(e.snoozeCount))),
                   (\(partition), \(e.alarm.id), 'missed', \(e.occurrenceAt), \(missedAt), 0, 0)
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    // MARK: Loading

    struct Pending: Sendable {
        var id: Int64
        var partition: Int
        var kind: String
        var due: Int64
    }

    static func decodePending(_ rows: PostgresRowSequence) async throws -> [Pending] {
        var out: [Pending] = []
        for try await (id, p, kind, due) in rows.decode((Int64, Int32, String, Date).self) {
            out.append(Pending(id: id, partition: Int(p), kind: kind, due: Int64((due.timeIntervalSince1970 * 1000).rounded())))
        }
        return out
    }

    /// Timers created after `afterID` in `partitions`, due before `until`.
    func newTimers(after afterID: Int64, partitions: [Int], until: Date) async throws -> [Pending] {
        let parts = partitions.map(Int32.init)
        return try await Self.decodePending(database.query("""
            SELECT id, partition, kind, due_at FROM timers WHERE id > \(afterID) AND partition = ANY(\(parts)::int[]) AND due_at < \(until)
            ORDER BY id LIMIT 100000
            """))
    }

    /// The highest timer id now (where polling starts).
    func maxTimerID() async throws -> Int64 {
        try await database.query("SELECT coalesce(max(id), 0) FROM timers").first(Int64.self) ?? 0
    }

    /// Timers of `partitions` due in [`from`, `until`).
    func timers(partitions: [Int], from: Date?, until: Date) async throws -> [Pending] {
        let parts = partitions.map(Int32.init)
        return try await Self.decodePending(database.query("""
            SELECT id, partition, kind, due_at FROM timers
            WHERE partition = ANY(\(parts)::int[]) AND (\(from)::timestamptz IS NULL OR due_at >= \(from)) AND due_at < \(until)
            """))
    }
}
