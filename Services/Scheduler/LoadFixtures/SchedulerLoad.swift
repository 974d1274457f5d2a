import Foundation
import SchedulerService
import Persistence
import PostgresNIO
import SchedulerCore

/// Bulk fixtures for load runs (`chronirctl scheduler burst` / `steady`) and tests: alarms and
/// their fire timers written straight into the scheduler schema, as the alarms events would
/// leave them, but thousands per statement. The running replicas pick them up like any timer.
public struct SchedulerLoad: Sendable {
    let database: Database
    let partitions: Int

    /// `partitions` must be the deployment's `CHRONIR_SCHEDULER_PARTITIONS`.
    public init(database: Database, partitions: Int = 256) {
        self.database = database
        self.partitions = partitions
    }

    /// Seeds one alarm per element of `dues` (ids `<prefix>-<n>`), each with a fire timer at its
    /// due instant, alerting `members`.
    public func seed(prefix: String, dues: [Date], members: [String] = ["load-user"]) async throws {
        let chunk = 10_000
        var start = 0
        while start < dues.count {
            let range = start..<min(dues.count, start + chunk)
            let ids = range.map { "\(prefix)-\($0)" }
            let parts = ids.map { Int32(Partitioning.partition(of: $0, partitions: partitions)) }
            let times = Array(dues[range])
            try await database.transaction { c in
                // Timers are written in id order (the fire engine's poll relies on it): wait for
                // the alarms stream's writers and hold them off until this commits.
                try await c.query("LOCK TABLE timers IN SHARE ROW EXCLUSIVE MODE", logger: database.logger)
                try await c.query("""
                    INSERT INTO alarms (alarm_id, partition, version, owner_id, title, timezone, time_of_day, next_fire_date, active,
                        offsets, members, alert_members)
                    SELECT id, p, 1, \(members[0]), 'Load ' || id, 'UTC', '09:00', due, true, '{}', \(members), \(members)
                    FROM unnest(\(ids)::text[], \(parts)::int[], \(times)::timestamptz[]) AS x(id, p, due)
                    ON CONFLICT (alarm_id) DO NOTHING
                    """, logger: database.logger)
                try await c.query("""
                    INSERT INTO timers (partition, alarm_id, kind, occurrence_at, due_at)
                    SELECT p, id, 'fire', due, due FROM unnest(\(ids)::text[], \(parts)::int[], \(times)::timestamptz[]) AS x(id, p, due)
                    ON CONFLICT DO NOTHING
                    """, logger: database.logger)
            }
            start += chunk
        }
    }

    /// How far the fires of `<prefix>-*` alarms got.
    public struct Progress: Sendable {
        /// Fire records committed.
        public var recorded: Int
        /// Of those, announced events in the stream (numbered: at commit, or by a relay before it
        /// sends them); what consumers received is measured downstream.
        public var published: Int
        /// Fire lateness (due → fire transaction), milliseconds, from the fire records.
        public var p50Ms: Double
        public var p99Ms: Double
        public var maxMs: Double
        /// The last fire record's time.
        public var lastFiredAt: Date?
    }

    /// Cheap counts while a run is under way: fire records and announced fires handed on since `since`.
    public func counts(since: Date) async throws -> (recorded: Int, published: Int) {
        let rows = try await database.query("""
            SELECT (SELECT count(*)::int FROM fires WHERE fired_at >= \(since) AND kind = 'fire'),
                   (SELECT count(*)::int FROM outbox WHERE created_at >= \(since) AND seq IS NOT NULL AND type = 'scheduler.alarm-fired')
            """)
        for try await (r, p) in rows.decode((Int, Int).self) { return (r, p) }
        return (0, 0)
    }

    /// The figures of the fires of `<prefix>-*` alarms (after a run).
    public func progress(prefix: String) async throws -> Progress {
        let pattern = prefix + "-%"
        let rows = try await database.query("""
            SELECT count(*)::int,
                coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM fired_at - due_at)), 0)::float8 * 1000,
                coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM fired_at - due_at)), 0)::float8 * 1000,
                coalesce(max(extract(epoch FROM fired_at - due_at)), 0)::float8 * 1000,
                max(fired_at)
            FROM fires WHERE alarm_id LIKE \(pattern) AND kind = 'fire'
            """)
        var p = Progress(recorded: 0, published: 0, p50Ms: 0, p99Ms: 0, maxMs: 0, lastFiredAt: nil)
        for try await (n, p50, p99, mx, last) in rows.decode((Int, Double, Double, Double, Date?).self) {
            p = Progress(recorded: n, published: 0, p50Ms: p50, p99Ms: p99, maxMs: mx, lastFiredAt: last)
        }
        let jsonPattern = "%\"alarmId\":\"\(prefix)-%"
        p.published = try await database.query("""
            SELECT count(*)::int FROM outbox WHERE type = 'scheduler.alarm-fired' AND seq IS NOT NULL AND envelope LIKE \(jsonPattern)
            """).first(Int.self) ?? 0
        return p
    }
}
