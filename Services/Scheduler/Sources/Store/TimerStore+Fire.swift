import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO
import SchedulerCore
import Tracing

extension TimerStore {
    /// What one fire transaction did.
    struct FireResult: Sendable {
        /// Fires recorded now, with the instants they were to fire at (due less lead, ms), for lateness.
        var fired: [(due: Int64, kind: String)] = []
        /// Timers found already fired or no longer pending (stale wheel entries, lost leases).
        var skipped = 0
        /// Some partitions were refused (newer owner or expired lease).
        var fenced = false
    }

    /// Records the due timers `ids` exactly once, in one transaction with the events that
    /// announce them: the leases of `owned` are locked `FOR KEY SHARE` (renewals pass, a takeover
    /// waits for the commit) and must still carry the epochs this replica was granted, unexpired
    /// (a newer owner fences it out); the timers are deleted as they fire;
    /// `fires` has one row per alarm, kind, occurrence, offset and snooze (a duplicate inserts
    /// nothing and announces nothing). `missed` marks overdue fires past the grace window.
    /// `now`: the scheduler's time (``SchedulerClock``), recorded as `fired_at`.
    func fire(ids: [Int64], owned: [Int: Int64], missed: Set<Int64> = [], now: Date = Date()) async throws -> FireResult {
        guard !ids.isEmpty, !owned.isEmpty else { return FireResult(skipped: ids.count) }
        let parts = owned.keys.sorted().map(Int32.init)
        let epochs = owned.keys.sorted().map { owned[$0]! }
        let result: FireResult = try await outbox.transaction(wakes: { !$0.fired.isEmpty }) { c in
            // A replica paused mid-fire must not keep its lease rows locked past its lease.
            try await c.query(PostgresQuery(unsafeSQL: "SET LOCAL idle_in_transaction_session_timeout = \(config.leaseDuration.milliseconds / 2)"),
                              logger: logger)
            let valid = try await c.query("""
                SELECT l.partition FROM leases l JOIN unnest(\(parts)::int[], \(epochs)::bigint[]) AS e(p, ep)
                    ON l.partition = e.p AND l.epoch = e.ep
                WHERE l.owner = \(instance) AND l.expires_at > clock_timestamp()
                FOR KEY SHARE OF l
                """, logger: logger).all(Int32.self)
            if valid.count < parts.count {
                logger.info("fenced: some partitions have a newer owner or an expired lease",
                            metadata: ["held": "\(parts.count)", "valid": "\(valid.count)"])
            }
            guard !valid.isEmpty else { return FireResult(skipped: ids.count, fenced: true) }
            config.stopInFire?.pass("the lease check of a fire transaction (\(valid.count) partitions locked)")
            let t0 = ContinuousClock.now
            let rows = try await c.query("""
                DELETE FROM timers t USING alarms a
                WHERE t.id = ANY(\(ids)::bigint[]) AND t.partition = ANY(\(valid)::int[]) AND a.alarm_id = t.alarm_id
                RETURNING t.id, t.partition, t.alarm_id, t.kind, t.occurrence_at, t.due_at, t.offset_minutes, t.snooze_count,
                    a.title, a.owner_id, a.members, a.alert_members, a.group_id, a.assigned_to, a.timezone, a.time_of_day, a.traceparent
                """, logger: logger)
            var due: [Row] = []
            for try await row in rows {
                let r = row.makeRandomAccess()
                due.append(Row(
                    id: try r[0].decode(Int64.self), partition: Int(try r[1].decode(Int32.self)), alarmId: try r[2].decode(String.self),
                    kind: TimerKind(try r[3].decode(String.self)), occurrence: try r[4].decode(Date.self), due: try r[5].decode(Date.self),
                    offset: Int(try r[6].decode(Int32.self)), snoozes: Int(try r[7].decode(Int32.self)), title: try r[8].decode(String.self),
                    owner: try r[9].decode(String.self), members: try r[10].decode([String].self), alert: try r[11].decode([String].self),
                    group: try r[12].decode(String?.self), assignee: try r[13].decode(String?.self), timezone: try r[14].decode(String.self),
                    timeOfDay: try r[15].decode(String.self), traceparent: try r[16].decode(String?.self)))
            }
            due.sort { ($0.due, $0.id) < ($1.due, $1.id) }
            // Each fire's event id is recorded with it, so a fire announced early can be withdrawn.
            let eventIDs = due.map { _ in UUIDv7.string() }
            let t1 = ContinuousClock.now
            let inserted = try await c.query("""
                INSERT INTO fires (alarm_id, kind, occurrence_at, offset_minutes, snooze_count, due_at, fired_at, partition, epoch, instance,
                                   outcome, event_id)
                SELECT a, k, o, off, sn, d, \(now), p, ep, \(instance), oc, ev
                FROM unnest(\(due.map(\.alarmId))::text[], \(due.map(\.kind.rawValue))::text[], \(due.map(\.occurrence))::timestamptz[],
                            \(due.map { Int32($0.offset) })::int[], \(due.map { Int32($0.snoozes) })::int[], \(due.map(\.due))::timestamptz[],
                            \(due.map { Int32($0.partition) })::int[], \(due.map { owned[$0.partition] ?? 0 })::bigint[],
                            \(due.map { missed.contains($0.id) ? "missed" : "fired" })::text[], \(eventIDs)::text[])
                    AS x(a, k, o, off, sn, d, p, ep, oc, ev)
                ON CONFLICT DO NOTHING
                RETURNING alarm_id, kind, occurrence_at, offset_minutes, snooze_count
                """, logger: logger)
            var fresh = Set<String>()
            for try await (a, k, o, off, sn) in inserted.decode((String, String, Date, Int32, Int32).self) {
                fresh.insert(Self.fireKey(a, k, o, Int(off), Int(sn)))
            }
            var envelopes: [Envelope] = []
            var result = FireResult()
            result.fenced = valid.count < parts.count
            for (r, eventID) in zip(due, eventIDs) {
                guard fresh.contains(Self.fireKey(r.alarmId, r.kind.rawValue, r.occurrence, r.offset, r.snoozes)) else {
                    result.skipped += 1
                    continue
                }
                if let e = try envelope(for: r, id: eventID, missed: missed.contains(r.id), now: now) { envelopes.append(e) }
                if !missed.contains(r.id) {
                    result.fired.append((Int64((r.due.timeIntervalSince1970 * 1000).rounded()) - config.lead(of: r.kind), r.kind.rawValue))
                }
            }
            result.skipped += ids.count - due.count
            let t2 = ContinuousClock.now
            try await outbox.append(envelopes, on: c)
            logger.debug("fire batch", metadata: ["timers": "\(ids.count)", "delete": "\(t0.duration(to: t1))",
                                                  "record+encode": "\(t1.duration(to: t2))", "outbox": "\(t2.duration(to: .now))"])
            return result
        }
        return result
    }

    struct Row: Sendable {
        var id: Int64
        var partition: Int
        var alarmId: String
        var kind: TimerKind
        var occurrence: Date
        var due: Date
        var offset: Int
        var snoozes: Int
        var title: String
        var owner: String
        var members: [String]
        var alert: [String]
        var group: String?
        var assignee: String?
        var timezone: String
        var timeOfDay: String
        var traceparent: String?
    }

    static func fireKey(_ a: String, _ k: String, _ o: Date, _ off: Int, _ sn: Int) -> String {
        "\(a)|\(k)|\(Int64((o.timeIntervalSince1970 * 1000).rounded()))|\(off)|\(sn)"
    }

    /// The event announcing a fire (nil for a warning or re-fire that went stale, and for a kind
    /// this release does not know: recorded, logged, not announced), in a new
    /// trace (`scheduler <kind>`) linked to the trace of the change that scheduled it.
    private func envelope(for r: Row, id: String, missed: Bool, now: Date) throws -> Envelope? {
        let span = outbox.telemetry.startLinkedSpan("scheduler \(r.kind)", linkedTo: r.traceparent, kind: .producer)
        defer { span.end() }
        if span.isRecording {
            span.attributes["chronir.alarm.id"] = r.alarmId
            span.attributes["chronir.occurrence"] = ISOTime.format(r.occurrence)
            span.attributes["chronir.lateness_ms"] = Int(now.timeIntervalSince(r.due) * 1000)
        }
        return try ServiceContext.withValue(span.context) { try eventEnvelope(for: r, id: id, missed: missed, now: now) }
    }

    private func eventEnvelope(for r: Row, id: String, missed: Bool, now: Date) throws -> Envelope? {
        switch FireOutcome.of(kind: r.kind, pastGrace: missed) {
        case .missed:
            return try outbox.envelope(SchedulerEvents.occurrenceMissed, SchedulerEvents.OccurrenceMissed(
                alarmId: r.alarmId, title: r.title, occurrenceAt: r.occurrence, members: r.members, detectedAt: now), actor: nil, id: id)
        case .fired:
            return try outbox.envelope(SchedulerEvents.alarmFired, SchedulerEvents.AlarmFired(
                alarmId: r.alarmId, title: r.title, ownerId: r.owner, occurrenceAt: r.occurrence, dueAt: r.due, firedAt: now,
                members: r.members, alertMembers: r.alert, groupId: r.group, assignedTo: r.assignee, snoozeCount: r.snoozes), actor: nil, id: id)
        case .preAlarm:
            return try outbox.envelope(SchedulerEvents.preAlarmDue, SchedulerEvents.PreAlarmDue(
                alarmId: r.alarmId, title: r.title, occurrenceAt: r.occurrence, offsetMinutes: r.offset,
                text: PreAlarmText.text(title: r.title, offsetMinutes: r.offset, occurrence: r.occurrence, timezone: r.timezone),
                members: r.members, dueAt: r.due, firedAt: now), actor: nil, id: id)
        case .silent:
            return nil  // a warning or re-fire past the grace window: recorded, not announced
        case .unknownKind(let kind):
            // Written by a newer release: recorded (it will not fire again), announced by nobody.
            logger.warning("a timer of a kind this release does not know fired: recorded, not announced",
                           metadata: ["kind": "\(kind)", "alarm": "\(r.alarmId)", "due": "\(ISOTime.format(r.due))"])
            return nil
        }
    }
}
