import Foundation
import Schedules

extension AlarmsEvents {
    /// Payload of ``alarmCompleted`` version 2: the completion and the part of the alarm's state
    /// a completion changes (its next occurrence, whether it stays on, its version) or that its
    /// consumers read to plan the next occurrence's timers, to tell the other members and to
    /// count it; not the whole ``AlarmState`` (title, schedule, member lists) version 1 carried.
    /// A completion changes nothing else of the alarm: a change that does comes as an
    /// `alarm-upserted` of its own.
    ///
    /// Consumers apply it to the state they hold when its ``version`` is newer, as they would an
    /// `alarm-upserted`.
    public struct OccurrenceCompleted: Codable, Sendable, Equatable {
        public var alarmId: String
        /// The alarm's version after the mark.
        public var version: Int
        public var ownerId: String
        /// The schedule's `type` (`weekly`, `monthly`, …).
        public var scheduleType: String
        /// The pending occurrence after the mark (null: ended).
        public var nextFireDate: Date?
        public var isActive: Bool
        public var isPaused: Bool
        /// Warning offsets in minutes, filtered by the owner's tier, for the next occurrence.
        public var preAlarmOffsetsMinutes: [Int]
        /// The alarm's group's pending window in minutes, when it sets one.
        public var missedWindowMinutes: Int?
        public var completionId: String
        public var scheduledDate: Date
        public var completedAt: Date
        public var userId: String
        public var userDisplayName: String?
        /// Present only when the alarm is shared: whom the completion push goes to.
        public var shared: Shared?

        /// What a completion push of a shared alarm needs.
        public struct Shared: Codable, Sendable, Equatable {
            public var title: String
            /// Everyone who sees the alarm: owner and shared members.
            public var members: [String]
            public var groupId: String?

            public init(title: String, members: [String], groupId: String?) {
                self.title = title
                self.members = members
                self.groupId = groupId
            }
        }

        /// The payload of a completion of the alarm whose state after the mark is `alarm`.
        public init(alarm: AlarmState, completionId: String, scheduledDate: Date, completedAt: Date, userId: String,
                    userDisplayName: String?) {
            self.alarmId = alarm.id
            self.version = alarm.version
            self.ownerId = alarm.ownerId
            self.scheduleType = alarm.schedule.type
            self.nextFireDate = alarm.nextFireDate
            self.isActive = alarm.isActive
            self.isPaused = alarm.isPaused
            self.preAlarmOffsetsMinutes = alarm.preAlarmOffsetsMinutes
            self.missedWindowMinutes = alarm.missedWindowMinutes
            self.completionId = completionId
            self.scheduledDate = scheduledDate
            self.completedAt = completedAt
            self.userId = userId
            self.userDisplayName = userDisplayName
            self.shared = alarm.members.count > 1 ? Shared(title: alarm.title, members: alarm.members, groupId: alarm.groupId) : nil
        }
    }
}

extension AlarmsEvents.AlarmState {
    /// This state with what completion `m` (of this alarm, newer) changed: its version, next
    /// occurrence, activity, and the warnings and window planned from them.
    public mutating func apply(_ m: AlarmsEvents.OccurrenceCompleted) {
        version = m.version
        nextFireDate = m.nextFireDate
        isActive = m.isActive
        isPaused = m.isPaused
        preAlarmOffsetsMinutes = m.preAlarmOffsetsMinutes
        missedWindowMinutes = m.missedWindowMinutes
    }
}
