import Foundation

/// The few members of the alarms stream's events that analytics reads. Decoding only these
/// skips the rest of each event's alarm state (schedule details, members, offsets, texts),
/// which was most of the analytics consumer's decoding work in a burst of completions. The
/// key names are those of ``AlarmsEvents`` (`AnalyticsViewTests` decodes real events).
enum AnalyticsViews {
    struct ScheduleKind: Decodable, Equatable {
        var type: String
    }

    /// An alarm's owner and schedule type (deleted, completed, snoozed).
    struct AlarmKind: Decodable, Equatable {
        var ownerId: String
        var schedule: ScheduleKind
    }

    /// `alarms.alarm-upserted`: a creation is version 1; shared when a member is not the owner.
    struct Upserted: Decodable, Equatable {
        var ownerId: String
        var schedule: ScheduleKind
        var members: [String]
        var version: Int
    }

    /// `alarms.alarm-completed` version 2 (the payload names the owner and schedule type).
    struct Completed: Decodable, Equatable {
        var ownerId: String
        var scheduleType: String
        var scheduledDate: Date
        var completedAt: Date
        var userId: String?
    }

    /// `alarms.alarm-completed` version 1 (the whole alarm state in `alarm`), still read from an
    /// outbox an older build filled.
    struct CompletedV1: Decodable, Equatable {
        var alarm: AlarmKind
        var scheduledDate: Date
        var completedAt: Date
        var userId: String?

        var completed: Completed {
            Completed(ownerId: alarm.ownerId, scheduleType: alarm.schedule.type, scheduledDate: scheduledDate,
                      completedAt: completedAt, userId: userId)
        }
    }

    /// `alarms.alarm-snoozed`.
    struct Snoozed: Decodable, Equatable {
        var alarm: AlarmKind
        var refireAt: Date
        var snoozeCount: Int
        var userId: String
    }
}
