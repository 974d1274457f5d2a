import Contracts
import Foundation
import Messaging

/// Turns events into notifications (texts of `chronir-api.md` Appendix C).
enum NotificationRenderer {
    static func alarmLink(_ id: String) -> String { "chronir://alarm/\(id)" }

    static func fired(_ e: SchedulerEvents.AlarmFired) -> RenderedNotification {
        var data = ["type": "alarm_fired", "alarmId": e.alarmId, "occurrenceAt": ISOTime.format(e.occurrenceAt),
                    "snoozeCount": String(e.snoozeCount), "deepLink": alarmLink(e.alarmId)]
        if let g = e.groupId { data["groupId"] = g }
        let body: String
        if e.snoozeCount > 0 {
            body = "Snoozed alarm (\(e.snoozeCount) of 3)"
        } else if e.groupId != nil {
            body = "Shared alarm from your group"
        } else if e.members.count > 1 {
            body = "Shared alarm"
        } else {
            body = "It's time"
        }
        return RenderedNotification(recipients: e.alertMembers, content: PushContent(
            type: "alarm_fired", title: "Chronir: \(e.title)", body: body, data: data, urgent: true,
            deepLink: alarmLink(e.alarmId), collapseKey: "fire-\(e.alarmId)"))
    }

    static func preAlarm(_ e: SchedulerEvents.PreAlarmDue) -> RenderedNotification {
        RenderedNotification(recipients: e.members, content: PushContent(
            type: "pre_alarm", title: "Chronir", body: e.text,
            data: ["type": "pre_alarm", "alarmId": e.alarmId, "occurrenceAt": ISOTime.format(e.occurrenceAt),
                   "offsetMinutes": String(e.offsetMinutes), "deepLink": alarmLink(e.alarmId)],
            urgent: false, deepLink: alarmLink(e.alarmId), collapseKey: "pre-\(e.alarmId)"))
    }

    static func missed(_ e: SchedulerEvents.OccurrenceMissed) -> RenderedNotification {
        RenderedNotification(recipients: e.members, content: PushContent(
            type: "alarm_missed", title: "Missed: \(e.title)", body: "Nobody marked it done; it moved on to the next occurrence",
            data: ["type": "alarm_missed", "alarmId": e.alarmId, "occurrenceAt": ISOTime.format(e.occurrenceAt),
                   "deepLink": alarmLink(e.alarmId)],
            urgent: false, deepLink: alarmLink(e.alarmId), collapseKey: "fire-\(e.alarmId)"))
    }

    static func completed(_ e: SchedulerEvents.CompletionPush) -> RenderedNotification {
        var data = ["type": "alarm_completed", "alarmId": e.alarmId, "completedBy": e.completedBy,
                    "occurrenceAt": ISOTime.format(e.occurrenceAt), "deepLink": alarmLink(e.alarmId)]
        if let g = e.groupId { data["groupId"] = g }
        return RenderedNotification(recipients: [e.recipient], content: PushContent(
            type: "alarm_completed", title: "✓ \(e.title) — Done", body: "Marked complete by \(e.completedByName)",
            data: data, urgent: false, deepLink: alarmLink(e.alarmId), collapseKey: "fire-\(e.alarmId)"))
    }
}
