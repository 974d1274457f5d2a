import Contracts
import Foundation
import Wire

/// Turns events into notifications (texts of `chronir-api.md` Appendix C).
public enum NotificationRenderer {
    public static func alarmLink(_ id: String) -> String { "chronir://alarm/\(id)" }

    /// What texts about a group's alarms say of the group: its name, its members' names, and
    /// who turned completion pushes off (US-10.3).
    public struct GroupText: Sendable, Equatable {
        public var name: String
        public var names: [String: String] = [:]
        public var completionPushesOff: Set<String> = []

        public init(name: String, names: [String: String] = [:], completionPushesOff: Set<String> = []) {
            self.name = name
            self.names = names
            self.completionPushesOff = completionPushesOff
        }
    }

    /// A fire: the alarm itself (urgent) to whom it alerts — every member, or the assignee — and,
    /// when it is assigned (US-10.4), a standard notification to the other members naming who
    /// it rings for. A group alarm's text names the group (Appendix C).
    public static func fired(_ e: SchedulerEvents.AlarmFired, group: GroupText? = nil) -> [RenderedNotification] {
        var data = ["type": "alarm_fired", "alarmId": e.alarmId, "occurrenceAt": ISOTime.format(e.occurrenceAt),
                    "snoozeCount": String(e.snoozeCount), "deepLink": alarmLink(e.alarmId)]
        if let g = e.groupId { data["groupId"] = g }
        if let a = e.assignedTo { data["assignedTo"] = a }
        let body: String
        if e.snoozeCount > 0 {
            body = "Snoozed alarm (snooze \(e.snoozeCount))"
        } else if e.assignedTo != nil, e.members.count > 1 {
            body = group.map { "Assigned to you in \($0.name)" } ?? "Assigned to you"
        } else if e.groupId != nil {
            body = "Shared alarm from \(group?.name ?? "your group")"
        } else if e.members.count > 1 {
            body = "Shared alarm"
        } else {
            body = "It's time"
        }
        var out = [RenderedNotification(recipients: e.alertMembers, content: PushContent(
            type: "alarm_fired", title: "Chronir: \(e.title)", body: body, data: data, urgent: true,
            deepLink: alarmLink(e.alarmId), collapseKey: "fire-\(e.alarmId)"), deliverAt: e.dueAt)]
        let others = e.members.filter { !e.alertMembers.contains($0) }
        if let assignee = e.assignedTo, !others.isEmpty {
            let who = group?.names[assignee] ?? "another member"
            out.append(RenderedNotification(recipients: others, content: PushContent(
                type: "alarm_fired", title: "Chronir: \(e.title)",
                body: "Ringing for \(who)" + (group.map { " in \($0.name)" } ?? ""), data: data, urgent: false,
                deepLink: alarmLink(e.alarmId), collapseKey: "fire-\(e.alarmId)"), deliverAt: e.dueAt))
        }
        return out
    }

    public static func preAlarm(_ e: SchedulerEvents.PreAlarmDue) -> RenderedNotification {
        RenderedNotification(recipients: e.members, content: PushContent(
            type: "pre_alarm", title: "Chronir", body: e.text,
            data: ["type": "pre_alarm", "alarmId": e.alarmId, "occurrenceAt": ISOTime.format(e.occurrenceAt),
                   "offsetMinutes": String(e.offsetMinutes), "deepLink": alarmLink(e.alarmId)],
            urgent: false, deepLink: alarmLink(e.alarmId), collapseKey: "pre-\(e.alarmId)"), deliverAt: e.dueAt)
    }

    public static func missed(_ e: SchedulerEvents.OccurrenceMissed) -> RenderedNotification {
        RenderedNotification(recipients: e.members, content: PushContent(
            type: "alarm_missed", title: "Missed: \(e.title)", body: "Nobody marked it done; it moved on to the next occurrence",
            data: ["type": "alarm_missed", "alarmId": e.alarmId, "occurrenceAt": ISOTime.format(e.occurrenceAt),
                   "deepLink": alarmLink(e.alarmId)],
            urgent: false, deepLink: alarmLink(e.alarmId), collapseKey: "fire-\(e.alarmId)"))
    }

    /// A completion told to one member; nobody when the member turned the group's completion
    /// pushes off (US-10.3). A group alarm's text names the group.
    public static func completed(_ e: SchedulerEvents.CompletionPush, group: GroupText? = nil) -> [RenderedNotification] {
        if let group, group.completionPushesOff.contains(e.recipient) { return [] }
        var data = ["type": "alarm_completed", "alarmId": e.alarmId, "completedBy": e.completedBy,
                    "occurrenceAt": ISOTime.format(e.occurrenceAt), "deepLink": alarmLink(e.alarmId)]
        if let g = e.groupId { data["groupId"] = g }
        return [RenderedNotification(recipients: [e.recipient], content: PushContent(
            type: "alarm_completed", title: "✓ \(e.title) — Done",
            body: "Marked complete by \(e.completedByName)" + (group.map { " in \($0.name)" } ?? ""),
            data: data, urgent: false, deepLink: alarmLink(e.alarmId), collapseKey: "fire-\(e.alarmId)"))]
    }

    public static func inviteLink(_ code: String) -> String { "https://chronir.app/invite/\(code)" }

    public static func invitationReceived(_ e: InvitationsEvents.Changed) -> RenderedNotification? {
        guard let invitee = e.userId else { return nil }
        let i = e.invitation
        let what = i.type == "group" ? "the \(i.referenceName) group" : "share \(i.referenceName)"
        return RenderedNotification(recipients: [invitee], content: PushContent(
            type: "invitation_received", title: "Chronir Invite", body: "\(i.inviterDisplayName) invited you to \(what)",
            data: ["type": "invitation_received", "invitationId": i.id, "deepLink": inviteLink(i.id)],
            urgent: false, deepLink: inviteLink(i.id), collapseKey: "invite-\(i.id)"))
    }

    /// A user's plan changed (a purchase, a lapse, an operator): their open pages and apps read
    /// the plan again. A silent push to devices (the store told the phone already); shown on
    /// the web, where the plan's limits and locks change at once.
    public static func planChanged(user: String, tier: Tier) -> RenderedNotification {
        let name = switch tier {
        case .free: "Free"
        case .plus: "Plus"
        case .premium: "Premium"
        }
        return RenderedNotification(recipients: [user], content: PushContent(
            type: "plan_changed", title: "Chronir", body: "Your plan is now \(name)",
            data: ["type": "plan_changed", "tier": tier.rawValue], urgent: false, deepLink: nil,
            collapseKey: "plan", silent: true))
    }

    public static func invitationAccepted(_ e: InvitationsEvents.Changed) -> RenderedNotification {
        let i = e.invitation
        let who = e.userDisplayName ?? "Someone"
        let what = i.type == "group" ? "joined \(i.referenceName)" : "now shares \(i.referenceName)"
        return RenderedNotification(recipients: [i.inviterId], content: PushContent(
            type: "invitation_accepted", title: "Invitation accepted", body: "\(who) \(what)",
            data: ["type": "invitation_accepted", "invitationId": i.id, "referenceId": i.referenceId, "deepLink": inviteLink(i.id)],
            urgent: false, deepLink: inviteLink(i.id), collapseKey: "invite-\(i.id)"))
    }
}
