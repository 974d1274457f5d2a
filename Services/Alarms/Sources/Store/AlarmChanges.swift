import AlarmsCore
import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO
import Tracing

/// What every write of an alarm does besides the row: the delta feed and the events.
struct AlarmChanges: Sendable {
    let store: AlarmStore
    let outbox: OutboxWriter

    /// The state other services need, with pre-alarm offsets filtered by the owner's tier.
    static func state(_ a: Alarm, ownerTier: Tier, missedWindowMinutes: Int? = nil) -> AlarmsEvents.AlarmState {
        var offsets: [Int] = []
        if a.preAlarmWarningEnabled { offsets.append(a.preAlarmWarningHours * 60) }
        if ownerTier >= .plus { offsets += a.preAlarmOffsets.compactMap { PreAlarmOffset.all[$0] } }
        let members = a.members
        var state = AlarmsEvents.AlarmState(
            id: a.id, ownerId: a.ownerId, title: a.title, schedule: a.schedule, nextFireDate: a.nextFireDate,
            isActive: a.isActive, isPaused: a.isPaused, deleted: a.deletedAt != nil,
            preAlarmOffsetsMinutes: Array(Set(offsets)).sorted(by: >), members: members,
            alertMembers: a.assignedTo.map { [$0] } ?? members, groupId: a.groupId, assignedTo: a.assignedTo,
            snoozeDurationMinutes: a.snoozeDurationMinutes, version: a.version
        )
        state.missedWindowMinutes = a.groupId == nil ? nil : missedWindowMinutes
        return state
    }

    /// The pending window `a`'s group sets (nil: none, or not a group alarm).
    func missedWindow(of a: Alarm, on c: PostgresConnection) async throws -> Int? {
        guard let g = a.groupId else { return nil }
        return try await store.groupSettings(group: g, on: c).pendingWindowMinutes
    }

    /// Records a change of `after` (previously `before`, nil when new): its event and the feed,
    /// in one statement after the owner's tier is read. The event names the members whose
    /// devices should read the alarm again (``AlarmSharing/syncMembers(before:after:actor:)``).
    /// `tellActor`: the one who made the change is told too (who joined by accepting an
    /// invitation: their devices learn of the alarm at once).
    /// `reason`: why members are told, when it is not one of them acting (`AlarmSharing.Reason`);
    /// `untold`: someone not to tell (a deleted account).
    func record(before: Alarm?, after: Alarm, actor: String?, tellActor: Bool = false, reason: AlarmSharing.Reason? = nil,
                untold: String? = nil, on c: PostgresConnection) async throws {
        let tier = try await store.tier(of: after.ownerId, on: c)
        let sync = AlarmSharing.syncMembers(before: before, after: after, actor: tellActor ? nil : actor).filter { $0 != untold }
        let window = try await missedWindow(of: after, on: c)
        try await store.record(events: outbox.rows([try changed(after, ownerTier: tier, window: window, actor: actor, sync: sync, reason: reason)]),
                               feed: [Self.feedChange(before: before, after: after)], on: c)
    }

    /// One change of one alarm, the sequence every write of an existing alarm follows: lock the
    /// row, let `change` edit a copy of it (it starts as the locked alarm, and may throw to
    /// refuse), and — when the copy differs — write it as ``AlarmWrite`` says (the version and
    /// `updatedAt`), and record the feed and the event, all in the caller's transaction. Answers the
    /// alarm before and after (the same when nothing changed: nothing is written), or nil when
    /// there is no such alarm.
    @discardableResult
    func revise(_ id: String, actor: String?, tellActor: Bool = false, reason: AlarmSharing.Reason? = nil, untold: String? = nil,
                at now: Date = Date(), on c: PostgresConnection,
                _ change: (inout Alarm) async throws -> Void) async throws -> (before: Alarm, after: Alarm)? {
        guard let before = try await store.lock(id, on: c) else { return nil }
        return try await revise(locked: before, actor: actor, tellActor: tellActor, reason: reason, untold: untold, at: now, on: c, change)
    }

    /// ``revise(_:actor:tellActor:reason:untold:at:on:_:)`` of an alarm the caller has locked
    /// already in this transaction (`before`, as it read it under the lock).
    func revise(locked before: Alarm, actor: String?, tellActor: Bool = false, reason: AlarmSharing.Reason? = nil, untold: String? = nil,
                at now: Date = Date(), on c: PostgresConnection,
                _ change: (inout Alarm) async throws -> Void) async throws -> (before: Alarm, after: Alarm) {
        var edited = before
        try await change(&edited)
        guard let after = AlarmWrite.revised(edited, from: before, at: now) else { return (before, before) }
        try await store.update(after, on: c)
        try await record(before: before, after: after, actor: actor, tellActor: tellActor, reason: reason, untold: untold, on: c)
        return (before, after)
    }

    /// Records a completion, skip or miss together with the alarm's own change: both events
    /// and the feed in one statement.
    func record(before: Alarm, after: Alarm, marked completion: Completion, actor: String?, on c: PostgresConnection) async throws {
        let tier = try await store.tier(of: after.ownerId, on: c)
        let window = try await missedWindow(of: after, on: c)
        try await store.record(events: outbox.rows([try changed(after, ownerTier: tier, window: window, actor: actor),
                                                    try marked(completion, alarm: after, ownerTier: tier, window: window, actor: actor)]),
                               feed: [Self.feedChange(before: before, after: after)], on: c)
    }

    /// The event of a completion or skip, in the trace of the request that made it. It carries
    /// the alarm's new state (version included; a completion only the part a mark changes or its
    /// consumers read), which consumers apply as they would an `alarm-upserted`, so a mark is
    /// one event, not two (a burst of completions is half the events to number, send and apply).
    func markEvent(after: Alarm, marked completion: Completion, ownerTier: Tier, missedWindowMinutes: Int?, actor: String?,
                   context: ServiceContext) throws -> Envelope {
        try marked(completion, alarm: after, ownerTier: ownerTier, window: missedWindowMinutes, actor: actor, context: context)
    }

    static func feedChange(before: Alarm?, after: Alarm) -> FeedChange {
        let deleted = after.deletedAt != nil
        return FeedChange(alarmId: after.id, before: before?.members ?? [], after: deleted ? [] : after.members, deleted: deleted)
    }

    private func changed(_ a: Alarm, ownerTier: Tier, window: Int?, actor: String?, sync: [String] = [],
                         reason: AlarmSharing.Reason? = nil) throws -> Envelope {
        var state = Self.state(a, ownerTier: ownerTier, missedWindowMinutes: window)
        state.syncMembers = sync.isEmpty ? nil : sync
        if !sync.isEmpty { state.syncReason = reason?.rawValue }
        return try outbox.envelope(a.deletedAt != nil ? AlarmsEvents.alarmDeleted : AlarmsEvents.alarmUpserted, state, actor: actor)
    }

    private func marked(_ completion: Completion, alarm: Alarm, ownerTier: Tier, window: Int?, actor: String?,
                        context: ServiceContext = .current ?? .topLevel) throws -> Envelope {
        var state = Self.state(alarm, ownerTier: ownerTier, missedWindowMinutes: window)
        if completion.status == .completed, let by = completion.userId {
            // What the completion's consumers read, not the whole state (version 2).
            let payload = AlarmsEvents.OccurrenceCompleted(
                alarm: state, completionId: completion.id, scheduledDate: completion.scheduledDate,
                completedAt: completion.completedAt, userId: by, userDisplayName: completion.userDisplayName)
            return try outbox.envelope(AlarmsEvents.alarmCompleted, payload, actor: actor, context: context)
        }
        let type: TypedEvent<AlarmsEvents.OccurrenceMarked>
        switch completion.status {
        case .skipped: type = AlarmsEvents.alarmSkipped
        case .missed, .snoozedExpired: type = AlarmsEvents.alarmMissed
        case .completed:
            // A completion always has its member (the API's actor); none is a bug upstream.
            throw ServiceError(.internalError, "completion \(completion.id) of alarm \(alarm.id) has no member")
        }
        // A skip by one member reaches the others as a sync (a completion has its own push).
        if completion.status == .skipped {
            let sync = AlarmSharing.syncMembers(before: nil, after: alarm, actor: actor)
            state.syncMembers = sync.isEmpty ? nil : sync
        }
        let payload = AlarmsEvents.OccurrenceMarked(
            alarm: state, completionId: completion.id, status: completion.status,
            scheduledDate: completion.scheduledDate, completedAt: completion.completedAt,
            userId: completion.userId, userDisplayName: completion.userDisplayName
        )
        return try outbox.envelope(type, payload, actor: actor, context: context)
    }
}
