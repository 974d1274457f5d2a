import Foundation
import Wire
import Schedules

/// Events of the `alarms` stream (JSON Schemas in `proto/events/`).
public enum AlarmsEvents {
    /// An alarm was created or changed (also: deactivated, paused, rescheduled).
    public static let alarmUpserted = TypedEvent<AlarmState>("alarms.alarm-upserted")
    /// An alarm was deleted (soft).
    public static let alarmDeleted = TypedEvent<AlarmState>("alarms.alarm-deleted")
    /// An occurrence was marked complete. Version 2 carries ``OccurrenceCompleted`` (what its
    /// consumers read); version 1, still read, carried an ``OccurrenceMarked`` with the whole state.
    public static let alarmCompleted = TypedEvent<OccurrenceCompleted>("alarms.alarm-completed", version: 2)
    /// An occurrence was skipped.
    public static let alarmSkipped = TypedEvent<OccurrenceMarked>("alarms.alarm-skipped")
    /// An occurrence passed its window unmarked (logged `missed`).
    public static let alarmMissed = TypedEvent<OccurrenceMarked>("alarms.alarm-missed")
    /// An occurrence was snoozed.
    public static let alarmSnoozed = TypedEvent<Snoozed>("alarms.alarm-snoozed")

    /// What the scheduler, notifications and invitations need of an alarm.
    public struct AlarmState: Codable, Sendable, Equatable {
        public var id: String
        public var ownerId: String
        public var title: String
        public var schedule: Schedule
        /// The pending occurrence (null: ended).
        public var nextFireDate: Date?
        public var isActive: Bool
        public var isPaused: Bool
        public var deleted: Bool
        /// Warning offsets in minutes, already filtered by the owner's tier (24 h = 1440 for all).
        public var preAlarmOffsetsMinutes: [Int]
        /// Everyone who sees the alarm: owner and shared members.
        public var members: [String]
        /// Who is alerted when it fires: the assignee, or every member when unassigned.
        public var alertMembers: [String]
        public var groupId: String?
        public var assignedTo: String?
        public var snoozeDurationMinutes: Int
        public var version: Int
        /// Whose devices and live streams should read the alarm again because of this change:
        /// every member and former member but the person who made it. Absent when the change
        /// reaches them otherwise (a completion's or a miss's own push) or concerns no one else.
        public var syncMembers: [String]?
        /// Why the members named in ``syncMembers`` are told, when no member acted:
        /// `owner-downgraded` (sharing ended with the owner's Premium), `owner-upgraded` (it came back).
        public var syncReason: String?
        /// Minutes from a fire until the occurrence counts as missed, when the alarm's group sets
        /// it (US-10.3); absent: the scheduler's window.
        public var missedWindowMinutes: Int?

        public init(id: String, ownerId: String, title: String, schedule: Schedule, nextFireDate: Date?, isActive: Bool,
                    isPaused: Bool, deleted: Bool, preAlarmOffsetsMinutes: [Int], members: [String], alertMembers: [String],
                    groupId: String?, assignedTo: String?, snoozeDurationMinutes: Int, version: Int) {
            self.id = id
            self.ownerId = ownerId
            self.title = title
            self.schedule = schedule
            self.nextFireDate = nextFireDate
            self.isActive = isActive
            self.isPaused = isPaused
            self.deleted = deleted
            self.preAlarmOffsetsMinutes = preAlarmOffsetsMinutes
            self.members = members
            self.alertMembers = alertMembers
            self.groupId = groupId
            self.assignedTo = assignedTo
            self.snoozeDurationMinutes = snoozeDurationMinutes
            self.version = version
            self.syncMembers = nil
            self.syncReason = nil
        }
    }

    /// Payload of completed/skipped/missed.
    public struct OccurrenceMarked: Codable, Sendable, Equatable {
        public var alarm: AlarmState
        public var completionId: String
        public var status: CompletionStatus
        public var scheduledDate: Date
        public var completedAt: Date
        /// Who marked it (null for missed).
        public var userId: String?
        public var userDisplayName: String?

        public init(alarm: AlarmState, completionId: String, status: CompletionStatus, scheduledDate: Date, completedAt: Date,
                    userId: String?, userDisplayName: String?) {
            self.alarm = alarm
            self.completionId = completionId
            self.status = status
            self.scheduledDate = scheduledDate
            self.completedAt = completedAt
            self.userId = userId
            self.userDisplayName = userDisplayName
        }
    }
}

extension AlarmsEvents {
    /// Payload of ``alarmSnoozed``.
    public struct Snoozed: Codable, Sendable, Equatable {
        public var alarm: AlarmState
        public var occurrenceAt: Date
        /// When the alarm fires again.
        public var refireAt: Date
        /// Consecutive snoozes of this occurrence (1–3).
        public var snoozeCount: Int
        public var userId: String

        public init(alarm: AlarmState, occurrenceAt: Date, refireAt: Date, snoozeCount: Int, userId: String) {
            self.alarm = alarm
            self.occurrenceAt = occurrenceAt
            self.refireAt = refireAt
            self.snoozeCount = snoozeCount
            self.userId = userId
        }
    }
}

extension AlarmsEvents: EventCatalogue {
    public static let stream = "alarms"
    public static let all: [any EventType] = [alarmUpserted, alarmDeleted, alarmCompleted, alarmSkipped, alarmMissed, alarmSnoozed]
}
