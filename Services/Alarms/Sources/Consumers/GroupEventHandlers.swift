import AlarmsCore
import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO

/// Group membership from the accounts stream (who may see and edit group alarms), with the
/// cascade of `chronir-api.md` §5.3–§5.4: a new member sees every group alarm; a member who
/// leaves is taken off them and unassigned, so the scheduler stops alerting them; the alarms a
/// leaving member owns leave the group with them, and the group's members come off them (they
/// were on them as the group's: an ex-member does not keep learning who joins, issue 57).
struct GroupEventHandlers: Sendable {
    let store: AlarmStore
    let changes: AlarmChanges

    func register(into h: inout EventHandlers) {
        h.on(AccountsEvents.groupUpserted) { e, _, c in
            try await upserted(e, on: c)
        }
        h.on(AccountsEvents.groupDeleted) { e, _, c in
            try await deleted(e, on: c)
        }
    }

    func upserted(_ e: AccountsEvents.GroupUpserted, on c: PostgresConnection) async throws {
        let g = e.group.id
        // Before the members are read: an alarm being made in the group meanwhile is either
        // committed first (and reshared below) or reads the members this writes.
        try await store.lockGroup(g, exclusive: true, on: c)
        let old = Set(try await store.groupMembers(group: g, on: c))
        try await store.deleteGroupMembers(group: g, on: c)
        try await store.insertGroupMembers(group: g, members: e.members, on: c)
        try await store.upsertGroupSettings(group: g, e.group.settings ?? GroupSettings(), on: c)
        let now = Set(e.members.map(\.uid))
        let removed = Set(e.removed).union(old.subtracting(now))
        try await reshare(group: g, adding: now.subtracting(old), removing: removed, remaining: now, detach: false, on: c)
    }

    func deleted(_ e: AccountsEvents.GroupDeleted, on c: PostgresConnection) async throws {
        try await store.lockGroup(e.groupId, exclusive: true, on: c)
        try await store.deleteGroupMembers(group: e.groupId, on: c)
        try await store.deleteGroupSettings(group: e.groupId, on: c)
        try await reshare(group: e.groupId, adding: [], removing: Set(e.memberIds), remaining: [], detach: true, on: c)
    }

    /// Applies membership changes to every live alarm of the group (`remaining`: its members
    /// after the change).
    func reshare(group: String, adding: Set<String>, removing: Set<String>, remaining: Set<String>, detach: Bool,
                 on c: PostgresConnection) async throws {
        guard !adding.isEmpty || !removing.isEmpty || detach else { return }
        // Alarms whose sharing is suspended (their owner's Premium ended) forget who left too.
        if !removing.isEmpty || detach {
            try await store.dropFromSuspended(group: group, members: removing.sorted(), remaining: remaining.sorted(), detach: detach, on: c)
        }
        for id in try await store.liveAlarmIDs(inGroup: group, on: c) {
            try await changes.revise(id, actor: nil, on: c) { n in
                if removing.contains(n.ownerId) {
                    // Its owner left: the alarm is theirs alone again, but for people on it who are
                    // not in the group (invited to the alarm itself).
                    n.groupId = nil
                    n.sharedWith = n.sharedWith.filter { !remaining.contains($0) && !removing.contains($0) }.sorted()
                } else {
                    n.sharedWith = Array(Set(n.sharedWith).union(adding).subtracting(removing).subtracting([n.ownerId])).sorted()
                }
                n.isShared = !n.sharedWith.isEmpty
                if let assignee = n.assignedTo, !n.members.contains(assignee) { n.assignedTo = nil }
                if detach { n.groupId = nil }
            }
        }
    }
}
