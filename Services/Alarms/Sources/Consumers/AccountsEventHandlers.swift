import AlarmsCore
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
        h.ignore(AccountsEvents.deviceRemoved, AccountsEvents.sessionRevoked)  // groups: GroupEventHandlers
        h.on(AccountsEvents.userUpserted) { user, ctx, c in
            let before = try await store.zones(of: user.uid, on: c)
            try await store.upsertUser(user, on: c)
            // The owner took the account back: feed links made before (maybe by someone else) stop.
            if let at = user.takenBackAt { try await store.deleteCalendarFeeds(of: user.uid, madeBefore: at, on: c) }
            // A changed profile zone is where the user is now (US-7.3), as is a device's below.
            if before?.profile != user.timezone { try await moved(user.uid, to: user.timezone, at: ctx.envelope.occurredAt, on: c) }
            // A home zone set (or changed) explicitly takes the fixed alarms kept at home time
            // along ("always fires at home time"); the home is the profile's zone until then.
            if let before, before.home != user.homeTimezone {
                let oldHome = before.home ?? before.profile, newHome = user.homeTimezone ?? user.timezone
                if oldHome != newHome { try await movedHome(user.uid, from: oldHome, to: newHome, on: c) }
            }
        }
        h.on(AccountsEvents.deviceUpserted) { e, _, c in
            guard let zone = e.device.timezone else { return }
            try await moved(e.uid, to: zone, at: e.device.updatedAt, on: c)
        }
        h.on(AccountsEvents.userDeleted) { user, ctx, c in
            try await deleteUser(user.uid, on: c)
        }
        GroupEventHandlers(store: store, changes: changes).register(into: &h)
        return h
    }

    /// `user` was seen in `zone` at `at`: when that is newer than what the read model holds and
    /// another zone, their floating alarms move to it and are re-planned (the scheduler follows
    /// their new `nextFireDate`; their devices and members are told like any change).
    func moved(_ user: String, to zone: String, at: Date, on c: PostgresConnection) async throws {
        guard TimeZone(identifier: zone) != nil, try await store.moveUser(user, to: zone, at: at, on: c) else { return }
        let now = Date()
        for id in try await store.floatingAlarmIDs(ownedBy: user, notIn: zone, on: c) {
            try await changes.revise(id, actor: nil, at: now, on: c) { $0 = try FloatingTime.moved($0, to: zone, now: now) }
        }
    }

    /// `user`'s home zone moved from `old` to `new`: their fixed alarms in `old` move to `new`,
    /// keeping their local times.
    func movedHome(_ user: String, from old: String, to new: String, on c: PostgresConnection) async throws {
        guard TimeZone(identifier: new) != nil else { return }
        let now = Date()
        for id in try await store.fixedAlarmIDs(ownedBy: user, in: old, on: c) {
            try await changes.revise(id, actor: nil, at: now, on: c) { $0 = try FloatingTime.moved($0, to: new, now: now) }
        }
    }

    /// Purges an account: its own alarms are deleted and published (the scheduler stops them,
    /// members' feeds get tombstones), then removed with their completions and snoozes; it
    /// leaves the alarms shared with or assigned to it; its marks on others' alarms stay in
    /// their history without a name; its feed and read-model rows go. Nothing holding the uid
    /// or the email remains (the outbox keeps the events for its retention).
    func deleteUser(_ uid: String, on c: PostgresConnection) async throws {
        let now = Date()
        // The others are told; the deleted account is not (nothing may reach it after its
        // deletion, and the notifications service may have purged it already).
        for id in try await store.liveAlarmIDs(ownedBy: uid, on: c) {
            try await changes.revise(id, actor: nil, untold: uid, at: now, on: c) { $0 = AlarmLifecycle.deleted($0, at: now) }
        }
        for id in try await store.liveAlarmIDs(sharedWithOrAssignedTo: uid, on: c) {
            try await changes.revise(id, actor: nil, untold: uid, at: now, on: c) { n in
                n = AlarmSharing.removing(uid, from: n) ?? n
                if n.assignedTo == uid { n.assignedTo = nil }
            }
        }
        try await store.forgetSuspensions(of: uid, on: c)
        let all = try await store.alarmIDs(ownedBy: uid, on: c)
        try await store.deleteCompletions(ofAlarms: all, on: c)
        try await store.deleteSnoozes(ofAlarms: all, on: c)
        try await store.deleteAlarms(ownedBy: uid, on: c)
        // Others' tombstones and history keep no trace of the account.
        try await store.removeFromTombstones(uid, on: c)
        try await store.forgetUser(uid, on: c)
    }
}
