import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO

/// What the alarms service takes from the accounts stream: display names (denormalized into
/// completions) and account deletion (the user's alarms go, and they leave others' alarms).
struct AccountsEventHandlers: Sendable {
    let store: AlarmStore
    let changes: AlarmChanges

    var handlers: EventHandlers {
        var h = EventHandlers(AccountsEvents.self)
        h.ignore(AccountsEvents.deviceUpserted, AccountsEvents.deviceRemoved, AccountsEvents.sessionRevoked)  // groups: GroupEventHandlers
        h.on(AccountsEvents.userUpserted) { user, _, c in
            try await store.upsertUser(user, on: c)
        }
        h.on(AccountsEvents.userDeleted) { user, ctx, c in
            try await deleteUser(user.uid, on: c)
        }
        GroupEventHandlers(store: store, changes: changes).register(into: &h)
        return h
    }

    /// Purges an account: its own alarms are deleted and published (the scheduler stops them,
    /// members' feeds get tombstones), then removed with their completions and snoozes; it
    /// leaves the alarms shared with or assigned to it; its marks on others' alarms stay in
    /// their history without a name; its feed and read-model rows go. Nothing holding the uid
    /// or the email remains (the outbox keeps the events for its retention).
    func deleteUser(_ uid: String, on c: PostgresConnection) async throws {
        let now = Date()
        let owned = try await store.liveAlarmIDs(ownedBy: uid, on: c)
        for id in owned {
            guard let a = try await store.lock(id, on: c) else { continue }
            var n = a
            n.deletedAt = now
            n.isActive = false
            n.version = a.version + 1
            n.updatedAt = now
            try await store.update(n, on: c)
            try await changes.record(before: a, after: n, actor: nil, on: c)
        }
        let shared = try await store.liveAlarmIDs(sharedWithOrAssignedTo: uid, on: c)
        for id in shared {
            guard let a = try await store.lock(id, on: c) else { continue }
            var n = a
            n.sharedWith.removeAll { $0 == uid }
            n.isShared = !n.sharedWith.isEmpty
            if n.assignedTo == uid { n.assignedTo = nil }
            n.version = a.version + 1
            n.updatedAt = now
            try await store.update(n, on: c)
            try await changes.record(before: a, after: n, actor: nil, on: c)
        }
        let all = try await store.alarmIDs(ownedBy: uid, on: c)
        try await store.deleteCompletions(ofAlarms: all, on: c)
        try await store.deleteSnoozes(ofAlarms: all, on: c)
        try await store.deleteAlarms(ownedBy: uid, on: c)
        // Others' tombstones and history keep no trace of the account.
        try await store.removeFromTombstones(uid, on: c)
        try await store.forgetUser(uid, on: c)
    }
}
