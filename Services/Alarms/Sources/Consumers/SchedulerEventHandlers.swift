import AlarmsCore
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
        var latest: [String: Date] = [:]
        for e in events { latest[e.alarmId] = max(latest[e.alarmId] ?? .distantPast, max(e.dueAt, e.firedAt)) }
        let now = Date()
        let written = try await store.lockAll(Array(latest.keys), on: c).compactMap { a in
            latest[a.id].flatMap { AlarmLifecycle.fired(a, at: $0, writtenAt: now) }
        }
        try await store.bumpFeed(try await store.writeFires(written, on: c), on: c)
    }

    /// A fire announced ahead of its instant was withdrawn before it rang: `lastFiredDate`
    /// goes back to the fire before it, if it still shows this one.
    func withdrawn(_ e: SchedulerEvents.FireWithdrawn, on c: PostgresConnection) async throws {
        guard e.kind != "pre" else { return }
        guard let a = try await store.lock(e.alarmId, on: c),
              let n = AlarmLifecycle.fireWithdrawn(a, dueAt: e.dueAt, previous: e.previousFiredAt, writtenAt: Date()) else { return }
        try await store.bumpFeed(try await store.writeFires([n], on: c), on: c)
    }

    /// The occurrence passed its missed window without a completion: log it and advance.
    func missed(_ e: SchedulerEvents.OccurrenceMissed, on c: PostgresConnection) async throws {
        guard let a = try await store.lock(e.alarmId, on: c), a.deletedAt == nil else { return }
        let done = try await store.hasCompletion(alarmId: a.id, occurrence: e.occurrenceAt, on: c)
        guard !done else { return }
        let snoozes = try await store.snoozeCount(alarmId: a.id, occurrence: e.occurrenceAt, on: c)
        let now = Date()
        let completion = Completion(
            id: UUIDv7.string(), alarmId: a.id, userId: nil, userDisplayName: nil, status: snoozes > 0 ? .snoozedExpired : .missed,
            scheduledDate: e.occurrenceAt, completedAt: e.detectedAt, note: nil, onTime: false, createdAt: now, snoozeCount: snoozes)
        try await store.insertUnmarkedCompletion(completion, on: c)
        let n = try AlarmLifecycle.missed(a, occurrence: e.occurrenceAt, now: now)
        try await store.update(n, on: c)
        try await changes.record(before: a, after: n, marked: completion, actor: nil, on: c)
    }
}
