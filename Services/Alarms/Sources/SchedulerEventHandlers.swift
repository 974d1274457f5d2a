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
        var h = EventHandlers()
        h.on(SchedulerEvents.alarmFired, SchedulerEvents.AlarmFired.self) { e, _, c in
            try await fired(e, on: c)
        }
        h.on(SchedulerEvents.occurrenceMissed, SchedulerEvents.OccurrenceMissed.self) { e, _, c in
            try await missed(e, on: c)
        }
        return h
    }

    /// Records when the alarm last rang. The change reaches devices through the delta feed;
    /// no alarm event follows (nothing downstream schedules by it).
    func fired(_ e: SchedulerEvents.AlarmFired, on c: PostgresConnection) async throws {
        guard let a = try await store.lock(e.alarmId, on: c), a.deletedAt == nil else { return }
        if let last = a.lastFiredDate, last >= e.firedAt { return }
        var n = a
        n.lastFiredDate = e.firedAt
        n.version = a.version + 1
        n.updatedAt = Date()
        try await store.update(n, on: c)
        try await store.bumpFeed(alarmId: n.id, before: a.members, after: n.members, deleted: false, on: c)
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
            id: UUIDv7.string(), alarmId: a.id, userId: nil, userDisplayName: nil, status: snoozed ? "snoozed_expired" : "missed",
            scheduledDate: e.occurrenceAt, completedAt: e.detectedAt, note: nil, onTime: false, createdAt: now)
        try await c.query("""
            INSERT INTO completions (id, alarm_id, user_id, user_display_name, status, scheduled_date, completed_at, note, on_time, created_at)
            VALUES (\(completion.id), \(a.id), NULL, NULL, \(completion.status), \(e.occurrenceAt), \(e.detectedAt), NULL, false, \(now))
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
        try await changes.record(before: a, after: n, actor: nil, on: c)
        try await changes.recordMark(completion, alarm: n, actor: nil, on: c)
    }
}
