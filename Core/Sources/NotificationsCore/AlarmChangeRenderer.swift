import Contracts
import Foundation

/// What a member's devices and live streams are told when someone else changes a shared or
/// group alarm (`chronir-api.md` §1.2, §4.3 step 7, §4.4 step 4): a silent `alarm_changed`,
/// which the app answers by reading the delta feed (`GET /v1/alarms?since=`).
extension NotificationRenderer {
    /// What an alarms event says of the alarm to the members it names: `alarm` is the state the
    /// event carries, `change` what happened (`updated`, `deleted`, `snoozed`, `skipped`).
    public struct ChangedAlarm: Decodable, Sendable {
        public var id: String
        public var title: String
        public var version: Int
        public var members: [String]
        public var groupId: String?
        public var syncMembers: [String]?
        /// `owner-downgraded` or `owner-upgraded` when the owner's plan, not a member, made the change.
        public var syncReason: String?
    }

    /// One silent notification per kind of recipient: members see `change`; former members
    /// (named in `syncMembers` but no longer members) see `removed`. Empty when no one is named.
    public static func alarmChanged(_ alarm: ChangedAlarm, change: String) -> [RenderedNotification] {
        guard let sync = alarm.syncMembers, !sync.isEmpty else { return [] }
        let members = Set(alarm.members)
        let staying = sync.filter { members.contains($0) && change != "deleted" }
        let gone = sync.filter { !members.contains($0) || change == "deleted" }
        var out: [RenderedNotification] = []
        if !staying.isEmpty { out.append(changed(alarm, change: change, recipients: staying)) }
        if !gone.isEmpty { out.append(changed(alarm, change: change == "deleted" ? "deleted" : "removed", recipients: gone)) }
        return out
    }

    private static func changed(_ alarm: ChangedAlarm, change: String, recipients: [String]) -> RenderedNotification {
        var data = ["type": "alarm_changed", "alarmId": alarm.id, "version": String(alarm.version), "change": change,
                    "deepLink": alarmLink(alarm.id)]
        if let g = alarm.groupId { data["groupId"] = g }
        // The owner's plan changed it: the members are told in words, not only their devices.
        if let reason = alarm.syncReason {
            data["reason"] = reason
            let downgraded = reason == "owner-downgraded"
            return RenderedNotification(recipients: recipients, content: PushContent(
                type: "alarm_changed", title: downgraded ? "No longer shared: \(alarm.title)" : "Shared again: \(alarm.title)",
                body: downgraded ? "Its owner's Premium plan ended, so this alarm is no longer shared with you"
                    : "Its owner is on Premium again, so this alarm is shared with you again",
                data: data, urgent: false, deepLink: alarmLink(alarm.id), collapseKey: "sync-\(alarm.id)"))
        }
        let body = switch change {
        case "deleted": "Deleted by its owner"
        case "removed": "You no longer share this alarm"
        case "snoozed": "Snoozed by another member"
        case "skipped": "Skipped by another member"
        default: "Changed by another member"
        }
        return RenderedNotification(recipients: recipients, content: PushContent(
            type: "alarm_changed", title: alarm.title, body: body, data: data, urgent: false,
            deepLink: alarmLink(alarm.id), collapseKey: "sync-\(alarm.id)", silent: true))
    }
}
