import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO

/// What the alarms service takes from the scheduler stream: fires set `lastFiredDate`;
/// a missed window logs a `missed` (or `snoozed_expired`) completion and moves the alarm on.
struct SchedulerEventHandlers: Sendable {
    let store: AlarmStore
    let changes: AlarmChanges

    var handlers: EventHandlers {
        var h = EventHandlers(SchedulerEvents.self)
        h.ignore(SchedulerEvents.preAlarmDue, SchedulerEvents.completionPush)
        // A burst of fires arrives as runs of these: two statements a run.
        h.onBatch([SchedulerEvents.alarmFired]) { run, c in
            try await fired(try run.map { try $0.envelope.decodePayload(SchedulerEvents.AlarmFired.self) }, on: c)
        }
        h.on(SchedulerEvents.occurrenceMissed) { e, _, c in
            try await missed(e, on: c)
        }
        h.on(SchedulerEvents.fireWithdrawn) { e, _, c in
            try await withdrawn(e, on: c)
        }
        return h
    }

    /// Records when each alarm last rang: its due instant, or when it fired if that was later
    /// (a fire is announced ahead of its instant). A later fire of an alarm wins; a deleted
    /// alarm or an older fire changes nothing. The change reaches devices through the delta feed; no alarm
    /// event follows (nothing downstream schedules by it).
    func fired(_ events: [SchedulerEvents.AlarmFired], on c: PostgresConnection) async throws {
        guard !events.isEmpty else { return }
        let rows = try await c.query("""
            UPDATE alarms a SET last_fired_date = x.f, version = a.version + 1, updated_at = now()
            FROM (SELECT id, max(f) AS f FROM unnest(\(events.map(\.alarmId))::text[], \(events.map { max($0.dueAt, $0.firedAt) })::timestamptz[]) AS t(id, f)
                  GROUP BY id) x
            WHERE a.id = x.id AND a.deleted_at IS NULL AND (a.last_fired_date IS NULL OR a.last_fired_date < x.f)
            RETURNING a.id, a.owner_id, a.shared_with
            """, logger: store.logger)
        try await bumpFeed(rows, on: c)
    }

    /// A fire announced ahead of its instant was withdrawn before it rang: `lastFiredDate`
    /// goes back to the fire before it, if it still shows this one.
    func withdrawn(_ e: SchedulerEvents.FireWithdrawn, on c: PostgresConnection) async throws {
        guard e.kind != "pre" else { return }
        let rows = try await c.query("""
            UPDATE alarms SET last_fired_date = \(e.previousFiredAt), version = version + 1, updated_at = now()
            WHERE id = \(e.alarmId) AND deleted_at IS NULL AND last_fired_date = \(e.dueAt)
            RETURNING id, owner_id, shared_with
            """, logger: store.logger)
        try await bumpFeed(rows, on: c)
    }

    /// Moves the delta feed of the alarms in `rows` (id, owner, shared_with) that changed in place.
    private func bumpFeed(_ rows: PostgresRowSequence, on c: PostgresConnection) async throws {
        var changes: [FeedChange] = []
        for try await (id, owner, shared) in rows.decode((String, String, [String]).self) {
            let members = Alarm.members(owner: owner, sharedWith: shared)
            changes.append(FeedChange(alarmId: id, before: members, after: members, deleted: false))
        }
        try await store.bumpFeed(changes, on: c)
    }

    /// The occurrence passed its missed window without a completion: log it and advance.
    func missed(_ e: SchedulerEvents.OccurrenceMissed, on c: PostgresConnection) async throws {
        guard let a = try await store.lock(e.alarmId, on: c), a.deletedAt == nil else { return }
        let done = try await c.query("""
            SELECT 1 FROM completions WHERE alarm_id = \(a.id) AND scheduled_date = \(e.occurrenceAt)
            """, logger: store.logger).first(Int32.self)
        guard done == nil else { return }
        let snoozed = try await c.query("""
            SELECT 1 FROM snoozes WHERE alarm_id = \(a.id) AND occurrence_at = \(e.occurrenceAt)
            """, logger: store.logger).first(Int32.self) != nil
        let now = Date()
        let completion = Completion(
            id: UUIDv7.string(), alarmId: a.id, userId: nil, userDisplayName: nil, status: snoozed ? .snoozedExpired : .missed,
            scheduledDate: e.occurrenceAt, completedAt: e.detectedAt, note: nil, onTime: false, createdAt: now)
        try await c.query("""
            INSERT INTO completions (id, alarm_id, user_id, user_display_name, status, scheduled_date, completed_at, note, on_time, created_at)
            VALUES (\(completion.id), \(a.id), NULL, NULL, \(completion.status.rawValue), \(e.occurrenceAt), \(e.detectedAt), NULL, false, \(now))
            ON CONFLICT (alarm_id, scheduled_date) DO NOTHING
            """, logger: store.logger)
        var n = a
        if let pending = a.nextFireDate, e.occurrenceAt >= pending {
            let compiled = try AlarmRules.compile(a.schedule)
            n.nextFireDate = compiled.next(after: max(e.occurrenceAt, now))
            if n.nextFireDate == nil { n.isActive = false }
        }
        n.version = a.version + 1
        n.updatedAt = now
        try await store.update(n, on: c)
        try await changes.record(before: a, after: n, marked: completion, actor: nil, on: c)
    }
}
