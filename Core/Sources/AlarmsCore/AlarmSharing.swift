import Contracts
import Foundation
import Wire

/// Who an alarm is shared with, by consent (`chronir-api.md` §6.2, US-10.1): pure rules, no I/O.
///
/// A person joins an alarm's `sharedWith` by accepting an invitation to it, or by belonging to
/// the group the alarm is in (joining a group is consent to its alarms). A create or update may
/// keep or remove members and add the alarm's group's members, nothing else: anyone else named
/// is refused with `CA035` naming the field and the people.
public enum AlarmSharing {
    /// Why members are told of a change no member made (`AlarmState.syncReason`).
    public enum Reason: String, Sendable {
        /// The owner's Premium ended: sharing is suspended, members lose access (§9.4).
        case ownerDowngraded = "owner-downgraded"
        /// The owner is on Premium again: the suspended sharing is back.
        case ownerUpgraded = "owner-upgraded"
    }

    /// Checks that `requested` (the `sharedWith` a request sets, already normalized by
    /// ``AlarmRules/members(_:owner:)``) names only people in `allowed`.
    public static func checkConsent(_ requested: [String], allowed: Set<String>) throws {
        let strangers = requested.filter { !allowed.contains($0) }
        guard !strangers.isEmpty else { return }
        throw ServiceError(.sharingNeedsInvitation, """
            sharedWith names \(strangers.count == 1 ? "someone who has" : "\(strangers.count) people who have") not accepted an \
            invitation to this alarm: invite them (POST /v1/invitations with inviteeUserId or inviteeEmail); they join when they accept
            """, details: .object(["field": .string("sharedWith"), "userIds": .array(strangers.map { .string($0) })]))
    }

    /// Who may be in the `sharedWith` of an alarm that had `previous` members and is in a group
    /// with `groupMembers` (empty when it is in none).
    public static func allowed(previous: [String], groupMembers: [String]) -> Set<String> {
        Set(previous).union(groupMembers)
    }

    /// `alarm` without `member`: off `sharedWith`, and unassigned when they were the assignee.
    /// Nil when they are not a member (the owner is not: an owner deletes instead).
    public static func removing(_ member: String, from alarm: Alarm) -> Alarm? {
        guard alarm.sharedWith.contains(member) else { return nil }
        var n = alarm
        n.sharedWith = alarm.sharedWith.filter { $0 != member }
        n.isShared = !n.sharedWith.isEmpty
        if n.assignedTo == member { n.assignedTo = nil }
        return n
    }

    /// What sharing an alarm had when its owner's Premium ended, kept to restore it.
    public struct Suspended: Sendable, Equatable {
        public var sharedWith: [String]
        public var groupId: String?
        public var assignedTo: String?

        public init(sharedWith: [String], groupId: String?, assignedTo: String?) {
            self.sharedWith = sharedWith
            self.groupId = groupId
            self.assignedTo = assignedTo
        }
    }

    /// `alarm` with its sharing suspended (§9.4: Premium → Free or Plus): no members, no group,
    /// no assignee but the owner; with what it had. Nil when it shares nothing.
    public static func suspending(_ alarm: Alarm) -> (alarm: Alarm, kept: Suspended)? {
        guard !alarm.sharedWith.isEmpty || alarm.groupId != nil else { return nil }
        var n = alarm
        n.sharedWith = []
        n.isShared = false
        n.groupId = nil
        if n.assignedTo != alarm.ownerId { n.assignedTo = nil }
        return (n, Suspended(sharedWith: alarm.sharedWith, groupId: alarm.groupId, assignedTo: alarm.assignedTo))
    }

    /// `alarm` with suspended sharing back (the owner is on Premium again): its members, its
    /// group with the group's members now when the owner still manages it (`groupMembers`
    /// non-nil), and its assignee when still a member.
    public static func restoring(_ kept: Suspended, to alarm: Alarm, groupMembers: [String]?) -> Alarm {
        var n = alarm
        var members = Set(alarm.sharedWith).union(kept.sharedWith)
        if let g = kept.groupId, let current = groupMembers {
            n.groupId = g
            members.formUnion(current)
        }
        members.remove(alarm.ownerId)
        n.sharedWith = members.sorted()
        n.isShared = !members.isEmpty
        if n.assignedTo == nil, let assignee = kept.assignedTo, n.members.contains(assignee) { n.assignedTo = assignee }
        return n
    }

    /// Whose devices should read the alarm again after a change from `before` to `after` made
    /// by `actor` (nil: the system): every member before or after but the actor, sorted. Empty
    /// when the only one concerned made the change.
    public static func syncMembers(before: Alarm?, after: Alarm, actor: String?) -> [String] {
        var everyone = Set(after.members)
        if let before { everyone.formUnion(before.members) }
        if let actor { everyone.remove(actor) }
        return everyone.sorted()
    }
}
