import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO
import SchedulerCore

extension TimerStore {
    /// One alarm event of a run, in stream order.
    enum AlarmChange: Sendable {
        /// A new state of an alarm (upserted or deleted), with the trace of the change.
        case state(AlarmsEvents.AlarmState, traceparent: String?)
        /// An occurrence was completed (`alarm-completed` version 2): the part of the alarm's
        /// state a completion changes, applied to the stored row.
        case completed(AlarmsEvents.OccurrenceCompleted, traceparent: String?)
        /// An occurrence was completed, skipped or missed.
        case settled(alarmId: String, occurrence: Date)
    }

    /// Applies a run of alarm events with at most five statements however long it is (a burst
    /// of completions arrives as thousands): the read-model rows of the run's alarms are locked
    /// and read at once, in id order; each alarm's newest state wins, and only when it is newer
    /// than the stored one (as in ``apply(_:traceparent:on:)``); an alarm whose occurrence,
    /// warnings or activity changed gets its timers replaced; then the settled occurrences lose
    /// their missed checks and re-fires (a completion always wins over a timer of the same
    /// occurrence written earlier in the run).
    func apply(run changes: [AlarmChange], on c: PostgresConnection) async throws {
        var latest: [String: (state: AlarmsEvents.AlarmState, traceparent: String?)] = [:]
        var marks: [String: (mark: AlarmsEvents.OccurrenceCompleted, traceparent: String?)] = [:]
        var settledIDs: [String] = [], settledAt: [Date] = []
        for change in changes {
            switch change {
            case .state(let s, let traceparent):
                if let seen = latest[s.id], seen.state.version >= s.version { continue }
                if let m = marks[s.id] {
                    if m.mark.version >= s.version { continue }
                    marks[s.id] = nil  // the whole newer state holds what the completion changed
                }
                latest[s.id] = (s, traceparent)
            case .completed(let m, let traceparent):
                if var seen = latest[m.alarmId] {
                    guard m.version > seen.state.version else { continue }
                    seen.state.apply(m)
                    latest[m.alarmId] = (seen.state, traceparent)
                } else {
                    if let seen = marks[m.alarmId], seen.mark.version >= m.version { continue }
                    marks[m.alarmId] = (m, traceparent)
                }
            case .settled(let id, let occurrence):
                settledIDs.append(id)
                settledAt.append(occurrence)
            }
        }
        if !latest.isEmpty || !marks.isEmpty { try await applyStates(latest, marks: marks, on: c) }
        if !settledIDs.isEmpty {
            try await c.prepared("""
                DELETE FROM timers t USING unnest(\(settledIDs)::text[], \(settledAt)::timestamptz[]) AS x(id, occ)
                WHERE t.alarm_id = x.id AND t.occurrence_at = x.occ AND t.kind IN ('missed', 'snooze')
                """, logger: logger)
        }
    }

    private func applyStates(_ latest: [String: (state: AlarmsEvents.AlarmState, traceparent: String?)],
                             marks: [String: (mark: AlarmsEvents.OccurrenceCompleted, traceparent: String?)],
                             on c: PostgresConnection) async throws {
        let ids = Set(latest.keys).union(marks.keys).sorted()
        let known = try await c.prepared("""
            SELECT alarm_id, version, next_fire_date, active, offsets FROM alarms WHERE alarm_id = ANY(\(ids)::text[])
            ORDER BY alarm_id FOR UPDATE
            """, logger: logger)
        var previous: [String: (version: Int32, next: Date?, active: Bool, offsets: [Int32])] = [:]
        for try await r in known.decode((String, Int32, Date?, Bool, [Int32]).self) { previous[r.0] = (r.1, r.2, r.3, r.4) }
        var rows = ReadModelRows()
        var timing = TimingRows()
        var gone = TimerReplacements()
        var timers = PlannedTimers()
        let now = Date()
        for id in ids {
            let p = previous[id]
            let next: Date?, active: Bool, offsets: [Int32], window: Int?
            if var (s, traceparent) = latest[id] {
                if let p, p.version >= Int32(s.version) { continue }
                // A deleted alarm's row stays only as the version fence: nothing personal in it.
                if s.deleted { (s.ownerId, s.title, s.members, s.alertMembers, s.assignedTo) = ("", "", [], [], nil) }
                (next, window) = (s.nextFireDate, s.missedWindowMinutes)
                active = s.isActive && !s.isPaused && !s.deleted && s.nextFireDate != nil
                offsets = s.preAlarmOffsetsMinutes.map(Int32.init)
                rows.append(s, partition: partition(of: id), active: active, offsets: offsets, traceparent: traceparent)
            } else if let (m, traceparent) = marks[id] {
                guard let p else {
                    // Its alarm-upserted never reached this read model (an event skipped by an
                    // operator): nothing to apply the change to; the alarm's next upsert brings it.
                    logger.warning("a completion of an alarm the scheduler does not hold", metadata: ["alarm": "\(id)", "version": "\(m.version)"])
                    continue
                }
                if p.version >= Int32(m.version) { continue }
                (next, window) = (m.nextFireDate, m.missedWindowMinutes)
                active = m.isActive && !m.isPaused && m.nextFireDate != nil
                offsets = m.preAlarmOffsetsMinutes.map(Int32.init)
                timing.append(m, active: active, offsets: offsets, traceparent: traceparent)
            } else {
                continue
            }
            if let p, p.next == next, p.active == active, p.offsets == offsets { continue }
            gone.append(id: id, keeping: active ? next : nil, offsets: offsets)
            if active, let occurrence = next {
                for t in plannedTimers(occurrence: occurrence, offsets: offsets, windowMinutes: window, now: now) {
                    timers.append(partition: partition(of: id), alarmId: id, occurrence: occurrence, timer: t)
                }
            }
        }
        if !timing.ids.isEmpty {
            // A completion's change: only the columns it can change, in place.
            try await c.prepared("""
                UPDATE alarms a SET version = x.v, next_fire_date = CASE WHEN x.hasnf THEN x.nf END, active = x.a,
                    offsets = ARRAY(SELECT e::int FROM jsonb_array_elements_text(x.offs::jsonb) WITH ORDINALITY AS j(e, n) ORDER BY n),
                    traceparent = NULLIF(x.tp, '')
                FROM unnest(\(timing.ids)::text[], \(timing.versions)::int[], \(timing.next)::timestamptz[], \(timing.hasNext)::boolean[],
                            \(timing.active)::boolean[], \(timing.offsets)::text[], \(timing.traceparents)::text[])
                    AS x(id, v, nf, hasnf, a, offs, tp)
                WHERE a.alarm_id = x.id AND a.version < x.v
                """, logger: logger)
        }
        if !rows.ids.isEmpty { try await upsert(rows, on: c) }
        try await replace(gone, timers, on: c)
    }

    private func partition(of id: String) -> Int32 {
        Int32(Partitioning.partition(of: id, partitions: config.partitions))
    }

    /// Writes whole read-model rows (new alarms, new states).
    private func upsert(_ rows: ReadModelRows, on c: PostgresConnection) async throws {
        try await c.prepared("""
            INSERT INTO alarms (alarm_id, partition, version, owner_id, title, timezone, time_of_day, next_fire_date, active, offsets,
                members, alert_members, group_id, assigned_to, traceparent)
            SELECT x.id, x.p, x.v, x.o, x.t, x.tz, x.tod, CASE WHEN x.hasnf THEN x.nf END, x.a,
                ARRAY(SELECT e::int FROM jsonb_array_elements_text(x.offs::jsonb) WITH ORDINALITY AS j(e, n) ORDER BY n),
                ARRAY(SELECT e FROM jsonb_array_elements_text(x.m::jsonb) WITH ORDINALITY AS j(e, n) ORDER BY n),
                ARRAY(SELECT e FROM jsonb_array_elements_text(x.am::jsonb) WITH ORDINALITY AS j(e, n) ORDER BY n),
                NULLIF(x.g, ''), NULLIF(x.asg, ''), NULLIF(x.tp, '')
            FROM unnest(\(rows.ids)::text[], \(rows.partitions)::int[], \(rows.versions)::int[], \(rows.owners)::text[],
                        \(rows.titles)::text[], \(rows.timezones)::text[], \(rows.times)::text[], \(rows.next)::timestamptz[],
                        \(rows.hasNext)::boolean[], \(rows.active)::boolean[], \(rows.offsets)::text[], \(rows.members)::text[],
                        \(rows.alert)::text[], \(rows.groups)::text[], \(rows.assignees)::text[], \(rows.traceparents)::text[])
                AS x(id, p, v, o, t, tz, tod, nf, hasnf, a, offs, m, am, g, asg, tp)
            ON CONFLICT (alarm_id) DO UPDATE SET version = excluded.version, owner_id = excluded.owner_id, title = excluded.title,
                timezone = excluded.timezone, time_of_day = excluded.time_of_day, next_fire_date = excluded.next_fire_date,
                active = excluded.active, offsets = excluded.offsets, members = excluded.members,
                alert_members = excluded.alert_members, group_id = excluded.group_id, assigned_to = excluded.assigned_to,
                traceparent = excluded.traceparent
            """, logger: logger)
    }

    /// Replaces the timers of alarms whose occurrence, warnings or activity changed.
    private func replace(_ gone: TimerReplacements, _ timers: PlannedTimers, on c: PostgresConnection) async throws {
        if !gone.ids.isEmpty {
            // Timers of other occurrences and dropped warnings go (all of them when inactive);
            // those of the kept occurrence stay (same ids, no churn).
            try await c.prepared("""
                DELETE FROM timers t
                USING unnest(\(gone.ids)::text[], \(gone.all)::boolean[], \(gone.occurrences)::timestamptz[], \(gone.offsets)::text[])
                    AS x(id, a, occ, offs)
                WHERE t.alarm_id = x.id AND (x.a OR t.occurrence_at <> x.occ OR (t.kind = 'pre'
                    AND NOT (t.offset_minutes = ANY(ARRAY(SELECT e::int FROM jsonb_array_elements_text(x.offs::jsonb) AS j(e))))))
                """, logger: logger)
            // A statement of its own, after the delete: a fire transaction that held one of
            // those timers has committed by now, and this snapshot sees its fire.
            try await withdrawEarlyFires(gone, on: c)
        }
        if !timers.alarmIds.isEmpty {
            try await c.prepared("""
                INSERT INTO timers (partition, alarm_id, kind, occurrence_at, due_at, offset_minutes)
                SELECT x.p, x.id, x.kind, x.occ, x.due, x.off
                FROM unnest(\(timers.partitions)::int[], \(timers.alarmIds)::text[], \(timers.kinds)::text[],
                            \(timers.occurrences)::timestamptz[], \(timers.dues)::timestamptz[], \(timers.offsets)::int[])
                    AS x(p, id, kind, occ, due, off)
                WHERE NOT EXISTS (SELECT 1 FROM fires f WHERE f.alarm_id = x.id AND f.kind = x.kind AND f.occurrence_at = x.occ
                                  AND f.offset_minutes = x.off AND f.snooze_count = 0)
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
    }
}

extension TimerStore {
    /// Fires announced ahead of their instant (the fire lead) that the alarm's new state no
    /// longer wants: their fire rows go (a timer for the same occurrence may fire again later)
    /// and `scheduler.fire-withdrawn` tells notifications to drop what it holds for them.
    fileprivate func withdrawEarlyFires(_ gone: TimerReplacements, on c: PostgresConnection) async throws {
        let rows = try await c.prepared("""
            DELETE FROM fires f
            USING unnest(\(gone.ids)::text[], \(gone.all)::boolean[], \(gone.occurrences)::timestamptz[], \(gone.offsets)::text[])
                AS x(id, a, occ, offs)
            WHERE f.alarm_id = x.id AND f.kind IN ('fire', 'pre', 'snooze') AND f.outcome = 'fired' AND f.event_id IS NOT NULL
                AND f.due_at > clock_timestamp()
                AND (x.a OR f.occurrence_at <> x.occ OR (f.kind = 'pre'
                    AND NOT (f.offset_minutes = ANY(ARRAY(SELECT e::int FROM jsonb_array_elements_text(x.offs::jsonb) AS j(e))))))
            RETURNING f.alarm_id, f.kind, f.occurrence_at, f.offset_minutes, f.snooze_count, f.due_at, f.event_id,
                (SELECT max(greatest(p.due_at, p.fired_at)) FROM fires p WHERE p.alarm_id = f.alarm_id AND p.kind IN ('fire', 'snooze')
                    AND p.outcome = 'fired' AND p.due_at <= clock_timestamp())
            """, logger: logger)
        var envelopes: [Envelope] = []
        for try await (alarm, kind, occurrence, offset, snoozes, due, event, previous)
            in rows.decode((String, String, Date, Int32, Int32, Date, String, Date?).self) {
            logger.info("fire withdrawn before its instant", metadata: ["alarm": "\(alarm)", "kind": "\(kind)", "due": "\(ISOTime.format(due))"])
            envelopes.append(try outbox.envelope(SchedulerEvents.fireWithdrawn, SchedulerEvents.FireWithdrawn(
                alarmId: alarm, kind: kind, occurrenceAt: occurrence, offsetMinutes: Int(offset), snoozeCount: Int(snoozes), dueAt: due,
                eventId: event, previousFiredAt: previous), actor: nil))
        }
        try await outbox.append(envelopes, on: c)
    }
}

/// Read-model rows as columns (for `unnest`); optional values travel as sentinels: a flag
/// for the date, the empty string for texts, JSON for the nested arrays.
private struct ReadModelRows {
    var ids: [String] = [], partitions: [Int32] = [], versions: [Int32] = [], owners: [String] = [], titles: [String] = []
    var timezones: [String] = [], times: [String] = [], next: [Date] = [], hasNext: [Bool] = [], active: [Bool] = []
    var offsets: [String] = [], members: [String] = [], alert: [String] = [], groups: [String] = [], assignees: [String] = []
    var traceparents: [String] = []

    mutating func append(_ s: AlarmsEvents.AlarmState, partition: Int32, active isActive: Bool, offsets o: [Int32], traceparent: String?) {
        ids.append(s.id); partitions.append(partition); versions.append(Int32(s.version)); owners.append(s.ownerId)
        titles.append(s.title); timezones.append(s.schedule.timezone); times.append(s.schedule.timeOfDay)
        next.append(s.nextFireDate ?? Date(timeIntervalSince1970: 0)); hasNext.append(s.nextFireDate != nil); active.append(isActive)
        offsets.append(Self.json(o.map(String.init))); members.append(Self.json(s.members)); alert.append(Self.json(s.alertMembers))
        groups.append(s.groupId ?? ""); assignees.append(s.assignedTo ?? ""); traceparents.append(traceparent ?? "")
    }

    static func json(_ values: [String]) -> String {
        // The fast encoder: JSONSerialization was 13 % of the scheduler's CPU in a burst.
        String(decoding: (try? JSONCoding.encode(values)) ?? Data("[]".utf8), as: UTF8.self)
    }
}

/// The columns a completion changes, as columns (for `unnest`).
private struct TimingRows {
    var ids: [String] = [], versions: [Int32] = [], next: [Date] = [], hasNext: [Bool] = [], active: [Bool] = []
    var offsets: [String] = [], traceparents: [String] = []

    mutating func append(_ m: AlarmsEvents.OccurrenceCompleted, active isActive: Bool, offsets o: [Int32], traceparent: String?) {
        ids.append(m.alarmId); versions.append(Int32(m.version))
        next.append(m.nextFireDate ?? Date(timeIntervalSince1970: 0)); hasNext.append(m.nextFireDate != nil); active.append(isActive)
        offsets.append(ReadModelRows.json(o.map(String.init))); traceparents.append(traceparent ?? "")
    }
}

/// Alarms whose timers are replaced: all of them go (`keeping` nil), or those of other
/// occurrences and of warnings no longer wanted.
fileprivate struct TimerReplacements {
    var ids: [String] = [], all: [Bool] = [], occurrences: [Date] = [], offsets: [String] = []

    mutating func append(id: String, keeping occurrence: Date?, offsets o: [Int32]) {
        ids.append(id); all.append(occurrence == nil); occurrences.append(occurrence ?? Date(timeIntervalSince1970: 0))
        offsets.append(ReadModelRows.json(o.map(String.init)))
    }
}

/// Timer rows to insert, as columns.
private struct PlannedTimers {
    var partitions: [Int32] = [], alarmIds: [String] = [], kinds: [String] = [], occurrences: [Date] = [], dues: [Date] = []
    var offsets: [Int32] = []

    mutating func append(partition: Int32, alarmId: String, occurrence: Date, timer t: PlannedTimer) {
        partitions.append(partition); alarmIds.append(alarmId); kinds.append(t.kind.rawValue); occurrences.append(occurrence)
        dues.append(t.due); offsets.append(t.offsetMinutes)
    }
}
