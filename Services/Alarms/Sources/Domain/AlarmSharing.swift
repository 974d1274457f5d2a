import Contracts
import Foundation
import Wire

/// Who an alarm is shared with, by consent (`chronir-api.md` §6.2, US-10.1): pure rules, no I/O.
///
/// A person joins an alarm's `sharedWith` by accepting an invitation to it, or by belonging to
/// the group the alarm is in (joining a group is consent to its alarms). A create or update may
/// keep or remove members and add the alarm's group's members, nothing else: anyone else named
/// is refused with `CA035` naming the field and the people.
enum AlarmSharing {
    /// Checks that `requested` (the `sharedWith` a request sets, already normalized by
    /// ``AlarmRules/members(_:owner:)``) names only people in `allowed`.
    static func checkConsent(_ requested: [String], allowed: Set<String>) throws {
        let strangers = requested.filter { !allowed.contains($0) }
        guard !strangers.isEmpty else { return }
        throw ServiceError(.sharingNeedsInvitation, """
            sharedWith names \(strangers.count == 1 ? "someone who has" : "\(strangers.count) people who have") not accepted an \
            invitation to this alarm: invite them (POST /v1/invitations with inviteeUserId or inviteeEmail); they join when they accept
            """, details: .object(["field": .string("sharedWith"), "userIds": .array(strangers.map { .string($0) })]))
    }

    /// Who may be in the `sharedWith` of an alarm that had `previous` members and is in a group
    /// with `groupMembers` (empty when it is in none).
    static func allowed(previous: [String], groupMembers: [String]) -> Set<String> {
        Set(previous).union(groupMembers)
    }

    /// `alarm` without `member`: off `sharedWith`, and unassigned when they were the assignee.
    /// Nil when they are not a member (the owner is not: an owner deletes instead).
    static func removing(_ member: String, from alarm: Alarm) -> Alarm? {
        guard alarm.sharedWith.contains(member) else { return nil }
        var n = alarm
        n.sharedWith = alarm.sharedWith.filter { $0 != member }
        n.isShared = !n.sharedWith.isEmpty
        if n.assignedTo == member { n.assignedTo = nil }
        return n
    }

    /// Whose devices should read the alarm again after a change from `before` to `after` made
    /// by `actor` (nil: the system): every member before or after but the actor, sorted. Empty
    /// when the only one concerned made the change.
    static func syncMembers(before: Alarm?, after: Alarm, actor: String?) -> [String] {
        var everyone = Set(after.members)
        if let before { everyone.formUnion(before.members) }
        if let actor { everyone.remove(actor) }
        return everyone.sorted()
    }
}
