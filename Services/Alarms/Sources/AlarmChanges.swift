import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO

/// What every write of an alarm does besides the row: the delta feed and the events.
struct AlarmChanges: Sendable {
    let store: AlarmStore
    let outbox: OutboxWriter

    /// The state other services need, with pre-alarm offsets filtered by the owner's tier.
    static func state(_ a: Alarm, ownerTier: Tier) -> AlarmsEvents.AlarmState {
        var offsets: [Int] = []
        if a.preAlarmWarningEnabled { offsets.append(a.preAlarmWarningHours * 60) }
        if ownerTier >= .plus { offsets += a.preAlarmOffsets.compactMap { PreAlarmOffset.all[$0] } }
        let members = a.members
        return AlarmsEvents.AlarmState(
            id: a.id, ownerId: a.ownerId, title: a.title, schedule: a.schedule, nextFireDate: a.nextFireDate,
            isActive: a.isActive, isPaused: a.isPaused, deleted: a.deletedAt != nil,
            preAlarmOffsetsMinutes: Array(Set(offsets)).sorted(by: >), members: members,
            alertMembers: a.assignedTo.map { [$0] } ?? members, groupId: a.groupId, assignedTo: a.assignedTo,
            snoozeDurationMinutes: a.snoozeDurationMinutes, version: a.version
        )
    }

    /// Records a change of `after` (previously `before`, nil when new) in the feed and the outbox.
    func record(before: Alarm?, after: Alarm, actor: String?, on c: PostgresConnection) async throws {
        let deleted = after.deletedAt != nil
        try await store.bumpFeed(alarmId: after.id, before: before?.members ?? [], after: deleted ? [] : after.members,
                                 deleted: deleted, on: c)
        let tier = try await store.tier(of: after.ownerId, on: c)
        let state = Self.state(after, ownerTier: tier)
        try await outbox.append(deleted ? AlarmsEvents.alarmDeleted : AlarmsEvents.alarmUpserted, state, actor: actor, on: c)
    }

    /// Records a completion, skip or miss (after the alarm's own change was recorded).
    func recordMark(_ completion: Completion, alarm: Alarm, actor: String?, on c: PostgresConnection) async throws {
        let tier = try await store.tier(of: alarm.ownerId, on: c)
        let type: String
        switch completion.status {
        case "completed": type = AlarmsEvents.alarmCompleted
        case "skipped": type = AlarmsEvents.alarmSkipped
        default: type = AlarmsEvents.alarmMissed
        }
        let payload = AlarmsEvents.OccurrenceMarked(
            alarm: Self.state(alarm, ownerTier: tier), completionId: completion.id, status: completion.status,
            scheduledDate: completion.scheduledDate, completedAt: completion.completedAt,
            userId: completion.userId, userDisplayName: completion.userDisplayName
        )
        try await outbox.append(type, payload, actor: actor, on: c)
    }
}
