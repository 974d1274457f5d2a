import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO

/// What the scheduler takes from the alarms stream. Every replica subscribes; the consumer
/// checkpoint is shared and locked per batch, so each event is applied once, by one replica,
/// into the shared tables; owners pick the new timers up from there.
struct AlarmsEventHandlers: Sendable {
    let store: TimerStore
    let outbox: OutboxWriter
    let engine: FireEngine

    var handlers: EventHandlers {
        var h = EventHandlers()
        for type in [AlarmsEvents.alarmUpserted, AlarmsEvents.alarmDeleted] {
            h.on(type, AlarmsEvents.AlarmState.self) { state, ctx, c in
                try await store.apply(state, traceparent: ctx.envelope.headers[EnvelopeHeader.traceparent], on: c)
                engine.timersChanged()
            }
        }
        h.on(AlarmsEvents.alarmCompleted, AlarmsEvents.OccurrenceMarked.self) { e, ctx, c in
            try await store.settle(alarmId: e.alarm.id, occurrence: e.scheduledDate, on: c)
            try await fanOut(e, actor: ctx.envelope.actor, on: c)
        }
        for type in [AlarmsEvents.alarmSkipped, AlarmsEvents.alarmMissed] {
            h.on(type, AlarmsEvents.OccurrenceMarked.self) { e, _, c in
                try await store.settle(alarmId: e.alarm.id, occurrence: e.scheduledDate, on: c)
            }
        }
        h.on(AlarmsEvents.alarmSnoozed, AlarmsEvents.Snoozed.self) { e, ctx, c in
            try await store.apply(e.alarm, traceparent: ctx.envelope.headers[EnvelopeHeader.traceparent], on: c)
            try await store.snooze(e, on: c)
            engine.timersChanged()
        }
        return h
    }

    /// A completion of a shared alarm: one push request per other member
    /// ("✓ <title> — Done", "Marked complete by <name>").
    func fanOut(_ e: AlarmsEvents.OccurrenceMarked, actor: String?, on c: PostgresConnection) async throws {
        guard let by = e.userId, e.alarm.members.count > 1 else { return }
        let name = e.userDisplayName ?? "a member"
        var envelopes: [Envelope] = []
        for member in e.alarm.members where member != by {
            envelopes.append(try outbox.envelope(SchedulerEvents.completionPush, SchedulerEvents.CompletionPush(
                alarmId: e.alarm.id, title: e.alarm.title, occurrenceAt: e.scheduledDate, completionId: e.completionId,
                completedBy: by, completedByName: name, recipient: member, groupId: e.alarm.groupId), actor: actor))
        }
        try await outbox.append(envelopes, on: c)
    }
}
