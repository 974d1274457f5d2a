import Contracts
import Foundation
import Logging
import Messaging
import Outbox
import Persistence
import PostgresNIO
import SchedulerCore
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
        try await apply(run: [.state(s, traceparent: traceparent)], on: c)
    }

    /// The timers of a pending occurrence (``TimerPlan/timers(occurrence:offsets:missedWindow:now:)``).
    /// `windowMinutes`: the alarm's group's pending window (nil: `CHRONIR_MISSED_WINDOW`).
    func plannedTimers(occurrence: Date, offsets: [Int32], windowMinutes: Int? = nil, now: Date) -> [PlannedTimer] {
        TimerPlan.timers(occurrence: occurrence, offsets: offsets, missedWindow: missedWindow(windowMinutes), now: now)
    }

    /// Seconds from a fire until the occurrence is missed: the group's window, else the service's.
    func missedWindow(_ minutes: Int?) -> TimeInterval {
        TimerPlan.missedWindow(groupMinutes: minutes, service: config.missedWindow.seconds)
    }

    /// A snooze: a re-fire at `refireAt`, and the missed check moves past it.
    func snooze(_ e: AlarmsEvents.Snoozed, on c: PostgresConnection) async throws {
        let partition = Int32(Partitioning.partition(of: e.alarm.id, partitions: config.partitions))
        try await c.query("""
            DELETE FROM timers WHERE alarm_id = \(e.alarm.id) AND occurrence_at = \(e.occurrenceAt) AND kind IN ('missed', 'snooze')
            """, logger: logger)
        let planned = TimerPlan.snoozed(refireAt: e.refireAt, missedWindow: missedWindow(e.alarm.missedWindowMinutes))
        // The re-fire carries the snooze's count (a fire per snooze); the missed check none.
        let counts = planned.map { $0.kind == .snooze ? Int32(e.snoozeCount) : 0 }
        try await c.query("""
            INSERT INTO timers (partition, alarm_id, kind, occurrence_at, due_at, offset_minutes, snooze_count)
            SELECT \(partition), \(e.alarm.id), k, \(e.occurrenceAt), d, o, n
            FROM unnest(\(planned.map(\.kind.rawValue))::text[], \(planned.map(\.due))::timestamptz[],
                        \(planned.map(\.offsetMinutes))::int[], \(counts)::int[]) AS x(k, d, o, n)
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    // MARK: Loading

    struct Pending: Sendable {
        var id: Int64
        var partition: Int
        var kind: TimerKind
        var due: Int64
    }

    static func decodePending<Rows: AsyncSequence>(_ rows: Rows) async throws -> [Pending] where Rows.Element == PostgresRow {
        var out: [Pending] = []
        for try await row in rows {
            let (id, p, kind, due) = try row.decode((Int64, Int32, String, Date).self)
            out.append(Pending(id: id, partition: Int(p), kind: TimerKind(kind), due: Int64((due.timeIntervalSince1970 * 1000).rounded())))
        }
        return out
    }

    /// Timers created after `afterID` in `partitions`: those due before `until`, and the
    /// highest id read (later ones are due beyond the horizon; the top-up loads them when the
    /// horizon reaches them). Filtering by due in SQL left the poll's position behind every
    /// timer beyond the horizon, so each poll read them all again: after a burst of 5 000
    /// completions, 10 000 rows scanned for nothing 10 times a second.
    func newTimers(after afterID: Int64, partitions: [Int], until: Date) async throws -> (due: [Pending], lastID: Int64?) {
        // Safe because timers are written in id order: every writer holds the alarms stream's
        // checkpoint lock (the load tool's seed locks the table), so no transaction commits a
        // lower id after a poll read a higher one. `near` is compared in SQL, exactly as the
        // top-up compares its range.
        let parts = partitions.map(Int32.init)
        var due: [Pending] = []
        var last: Int64?
        for try await row in try await database.prepared("""
            SELECT id, partition, kind, due_at, due_at < \(until) FROM timers WHERE id > \(afterID) AND partition = ANY(\(parts)::int[])
            ORDER BY id LIMIT 100000
            """) {
            let (id, p, kind, at, near) = try row.decode((Int64, Int32, String, Date, Bool).self)
            last = id
            if near { due.append(Pending(id: id, partition: Int(p), kind: TimerKind(kind), due: Int64((at.timeIntervalSince1970 * 1000).rounded()))) }
        }
        return (due, last)
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
