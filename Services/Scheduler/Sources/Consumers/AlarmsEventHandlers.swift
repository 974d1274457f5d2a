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
            let traceparent = e.headers[EnvelopeHeader.traceparent]
            switch e.type {
            case AlarmsEvents.alarmUpserted, AlarmsEvents.alarmDeleted:
                changes.append(.state(try e.decodePayload(AlarmsEvents.AlarmState.self), traceparent: traceparent))
            case AlarmsEvents.alarmCompleted where e.version >= 2:
                // The part of the state a completion changes, applied to the alarm's row.
                let done = try e.payload(AlarmsEvents.alarmCompleted)
                changes.append(.completed(done, traceparent: traceparent))
                changes.append(.settled(alarmId: done.alarmId, occurrence: done.scheduledDate))
                pushes += try fanOut(done, actor: e.actor, context: ctx.traceContext)
            default:
                // A skip, a miss, or a version-1 completion carries the alarm's whole new state
                // (no alarm-upserted of its own follows a mark): applied first, only if newer,
                // then the occurrence settles.
                let marked = try e.decodePayload(AlarmsEvents.OccurrenceMarked.self)
                changes.append(.state(marked.alarm, traceparent: traceparent))
                changes.append(.settled(alarmId: marked.alarm.id, occurrence: marked.scheduledDate))
                if e.type == AlarmsEvents.alarmCompleted.type, let by = marked.userId {
                    pushes += try fanOut(AlarmsEvents.OccurrenceCompleted(
                        alarm: marked.alarm, completionId: marked.completionId, scheduledDate: marked.scheduledDate,
                        completedAt: marked.completedAt, userId: by, userDisplayName: marked.userDisplayName),
                        actor: e.actor, context: ctx.traceContext)
                }
            }
        }
        try await store.apply(run: changes, on: c)
        try await outbox.append(pushes, on: c)
        engine.timersChanged()
    }

    /// A completion of a shared alarm: one push request per other member
    /// ("✓ <title> — Done", "Marked complete by <name>").
    func fanOut(_ e: AlarmsEvents.OccurrenceCompleted, actor: String?, context: ServiceContext) throws -> [Envelope] {
        guard let shared = e.shared, shared.members.count > 1 else { return [] }
        let name = e.userDisplayName ?? "a member"
        var envelopes: [Envelope] = []
        for member in shared.members where member != e.userId {
            envelopes.append(try outbox.envelope(SchedulerEvents.completionPush, SchedulerEvents.CompletionPush(
                alarmId: e.alarmId, title: shared.title, occurrenceAt: e.scheduledDate, completionId: e.completionId,
                completedBy: e.userId, completedByName: name, recipient: member, groupId: shared.groupId), actor: actor, context: context))
        }
        return envelopes
    }
}
