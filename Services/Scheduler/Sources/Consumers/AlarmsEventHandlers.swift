import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO
import Tracing

/// What the scheduler takes from the alarms stream. Every replica subscribes; the consumer
/// checkpoint is shared and locked per batch, so each event is applied once, by one replica,
/// into the shared tables; owners pick the new timers up from there.
struct AlarmsEventHandlers: Sendable {
    let store: TimerStore
    let outbox: OutboxWriter
    let engine: FireEngine

    var handlers: EventHandlers {
        var h = EventHandlers(AlarmsEvents.self)
        // A burst of completions arrives as runs of these: a few statements a run.
        h.onBatch([AlarmsEvents.alarmUpserted, AlarmsEvents.alarmDeleted, AlarmsEvents.alarmCompleted,
                   AlarmsEvents.alarmSkipped, AlarmsEvents.alarmMissed]) { run, c in
            try await applyRun(run, on: c)
        }
        h.on(AlarmsEvents.alarmSnoozed) { e, ctx, c in
            try await store.apply(e.alarm, traceparent: ctx.envelope.headers[EnvelopeHeader.traceparent], on: c)
            try await store.snooze(e, on: c)
            engine.timersChanged()
        }
        return h
    }

    /// Applies a run of alarm events: states and settled occurrences in a few statements, and
    /// the completion pushes of shared alarms in one.
    func applyRun(_ run: [EventContext], on c: PostgresConnection) async throws {
        var changes: [TimerStore.AlarmChange] = []
        var pushes: [Envelope] = []
        for ctx in run {
            let e = ctx.envelope
            switch e.type {
            case AlarmsEvents.alarmUpserted, AlarmsEvents.alarmDeleted:
                changes.append(.state(try e.decodePayload(AlarmsEvents.AlarmState.self), traceparent: e.headers[EnvelopeHeader.traceparent]))
            default:
                // A mark carries the alarm's new state (a completion or skip comes without an
                // alarm-upserted of its own): applied first, only if newer, then the occurrence settles.
                let marked = try e.decodePayload(AlarmsEvents.OccurrenceMarked.self)
                changes.append(.state(marked.alarm, traceparent: e.headers[EnvelopeHeader.traceparent]))
                changes.append(.settled(alarmId: marked.alarm.id, occurrence: marked.scheduledDate))
                if e.type == AlarmsEvents.alarmCompleted.type { pushes += try fanOut(marked, actor: e.actor, context: ctx.traceContext) }
            }
        }
        try await store.apply(run: changes, on: c)
        try await outbox.append(pushes, on: c)
        engine.timersChanged()
    }

    /// A completion of a shared alarm: one push request per other member
    /// ("✓ <title> — Done", "Marked complete by <name>").
    func fanOut(_ e: AlarmsEvents.OccurrenceMarked, actor: String?, context: ServiceContext) throws -> [Envelope] {
        guard let by = e.userId, e.alarm.members.count > 1 else { return [] }
        let name = e.userDisplayName ?? "a member"
        var envelopes: [Envelope] = []
        for member in e.alarm.members where member != by {
            envelopes.append(try outbox.envelope(SchedulerEvents.completionPush, SchedulerEvents.CompletionPush(
                alarmId: e.alarm.id, title: e.alarm.title, occurrenceAt: e.scheduledDate, completionId: e.completionId,
                completedBy: by, completedByName: name, recipient: member, groupId: e.alarm.groupId), actor: actor, context: context))
        }
        return envelopes
    }
}
