import Foundation
import Wire

/// Events of the `scheduler` stream (pushed to notifications and alarms; replayable from any
/// replica). JSON Schemas in `proto/events/`.
public enum SchedulerEvents {
    /// An occurrence (or a snoozed re-fire) is due: alert its members.
    public static let alarmFired = TypedEvent<AlarmFired>("scheduler.alarm-fired")
    /// A pre-alarm warning is due (24 h for everyone; 7 d / 3 d / 1 d / 1 h for Plus).
    public static let preAlarmDue = TypedEvent<PreAlarmDue>("scheduler.pre-alarm-due")
    /// An occurrence passed its missed window with no completion.
    public static let occurrenceMissed = TypedEvent<OccurrenceMissed>("scheduler.occurrence-missed")
    /// A member completed a shared alarm: tell one other member.
    public static let completionPush = TypedEvent<CompletionPush>("scheduler.completion-push")
    /// A fire announced ahead of its due instant (the fire lead) will not happen after all:
    /// the alarm changed before it was due. Notifications drops what it holds for it.
    public static let fireWithdrawn = TypedEvent<FireWithdrawn>("scheduler.fire-withdrawn")

    /// Payload of ``alarmFired``.
    public struct AlarmFired: Codable, Sendable, Equatable {
        public var alarmId: String
        public var title: String
        public var ownerId: String
        /// The occurrence this fire is about.
        public var occurrenceAt: Date
        /// When the timer was due (the occurrence, or the snooze's end).
        public var dueAt: Date
        public var firedAt: Date
        /// Everyone who sees the alarm.
        public var members: [String]
        /// Who gets the persistent alarm: the assignee, or every member.
        public var alertMembers: [String]
        public var groupId: String?
        public var assignedTo: String?
        /// 0 for the occurrence itself; 1–3 for re-fires after snoozes.
        public var snoozeCount: Int

        public init(alarmId: String, title: String, ownerId: String, occurrenceAt: Date, dueAt: Date, firedAt: Date,
                    members: [String], alertMembers: [String], groupId: String?, assignedTo: String?, snoozeCount: Int) {
            self.alarmId = alarmId
            self.title = title
            self.ownerId = ownerId
            self.occurrenceAt = occurrenceAt
            self.dueAt = dueAt
            self.firedAt = firedAt
            self.members = members
            self.alertMembers = alertMembers
            self.groupId = groupId
            self.assignedTo = assignedTo
            self.snoozeCount = snoozeCount
        }
    }

    /// Payload of ``preAlarmDue``.
    public struct PreAlarmDue: Codable, Sendable, Equatable {
        public var alarmId: String
        public var title: String
        public var occurrenceAt: Date
        public var offsetMinutes: Int
        /// "Tomorrow: Change HVAC Filter at 9:00 AM", "In 3 days: Change HVAC Filter".
        public var text: String
        public var members: [String]
        public var dueAt: Date
        public var firedAt: Date

        public init(alarmId: String, title: String, occurrenceAt: Date, offsetMinutes: Int, text: String, members: [String],
                    dueAt: Date, firedAt: Date) {
            self.alarmId = alarmId
            self.title = title
            self.occurrenceAt = occurrenceAt
            self.offsetMinutes = offsetMinutes
            self.text = text
            self.members = members
            self.dueAt = dueAt
            self.firedAt = firedAt
        }
    }

    /// Payload of ``occurrenceMissed``.
    public struct OccurrenceMissed: Codable, Sendable, Equatable {
        public var alarmId: String
        public var title: String
        public var occurrenceAt: Date
        public var members: [String]
        public var detectedAt: Date

        public init(alarmId: String, title: String, occurrenceAt: Date, members: [String], detectedAt: Date) {
            self.alarmId = alarmId
            self.title = title
            self.occurrenceAt = occurrenceAt
            self.members = members
            self.detectedAt = detectedAt
        }
    }

    /// Payload of ``completionPush``: one per member to tell.
    public struct CompletionPush: Codable, Sendable, Equatable {
        public var alarmId: String
        public var title: String
        public var occurrenceAt: Date
        public var completionId: String
        public var completedBy: String
        public var completedByName: String
        /// The member this push goes to.
        public var recipient: String
        public var groupId: String?

        public init(alarmId: String, title: String, occurrenceAt: Date, completionId: String, completedBy: String,
                    completedByName: String, recipient: String, groupId: String?) {
            self.alarmId = alarmId
            self.title = title
            self.occurrenceAt = occurrenceAt
            self.completionId = completionId
            self.completedBy = completedBy
            self.completedByName = completedByName
            self.recipient = recipient
            self.groupId = groupId
        }
    }

    /// Payload of ``fireWithdrawn``.
    public struct FireWithdrawn: Codable, Sendable, Equatable {
        public var alarmId: String
        /// `fire`, `pre` or `snooze`: the kind of timer that was announced early.
        public var kind: String
        public var occurrenceAt: Date
        public var offsetMinutes: Int
        public var snoozeCount: Int
        /// When it would have rung.
        public var dueAt: Date
        /// The id of the event that announced it (`scheduler.alarm-fired` or `scheduler.pre-alarm-due`).
        public var eventId: String
        /// When the alarm last rang before this fire (nil: never); the alarms service puts
        /// `lastFiredDate` back to it.
        public var previousFiredAt: Date?

        public init(alarmId: String, kind: String, occurrenceAt: Date, offsetMinutes: Int, snoozeCount: Int, dueAt: Date,
                    eventId: String, previousFiredAt: Date?) {
            self.alarmId = alarmId
            self.kind = kind
            self.occurrenceAt = occurrenceAt
            self.offsetMinutes = offsetMinutes
            self.snoozeCount = snoozeCount
            self.dueAt = dueAt
            self.eventId = eventId
            self.previousFiredAt = previousFiredAt
        }
    }
}

extension SchedulerEvents: EventCatalogue {
    public static let stream = "scheduler"
    public static let all: [any EventType] = [alarmFired, preAlarmDue, occurrenceMissed, completionPush, fireWithdrawn]
}
