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
        h.on(AccountsEvents.userUpserted) { user, ctx, c in
            try await c.query("""
                INSERT INTO users (user_id, display_name, email, timezone) VALUES (\(user.uid), \(user.displayName), \(user.email), \(user.timezone))
                ON CONFLICT (user_id) DO UPDATE SET display_name = excluded.display_name, email = excluded.email, timezone = excluded.timezone
                """, logger: ctx.logger)
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
        let owned = try await c.query("SELECT id FROM alarms WHERE owner_id = \(uid) AND deleted_at IS NULL", logger: store.logger).all(String.self)
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
        let shared = try await c.query("""
            SELECT id FROM alarms WHERE (\(uid) = ANY(shared_with) OR assigned_to = \(uid)) AND deleted_at IS NULL AND owner_id <> \(uid)
            """, logger: store.logger).all(String.self)
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
        let all = try await c.query("SELECT id FROM alarms WHERE owner_id = \(uid)", logger: store.logger).all(String.self)
        try await c.query("DELETE FROM completions WHERE alarm_id = ANY(\(all)::text[])", logger: store.logger)
        try await c.query("DELETE FROM snoozes WHERE alarm_id = ANY(\(all)::text[])", logger: store.logger)
        try await c.query("DELETE FROM alarms WHERE owner_id = \(uid)", logger: store.logger)
        // Others' tombstones and history keep no trace of the account.
        try await c.query("""
            UPDATE alarms SET shared_with = array_remove(shared_with, \(uid)), assigned_to = NULLIF(assigned_to, \(uid))
            WHERE deleted_at IS NOT NULL AND (\(uid) = ANY(shared_with) OR assigned_to = \(uid))
            """, logger: store.logger)
        try await c.query("UPDATE completions SET user_id = NULL, user_display_name = NULL WHERE user_id = \(uid)", logger: store.logger)
        try await c.query("UPDATE snoozes SET updated_by = '' WHERE updated_by = \(uid)", logger: store.logger)
        try await c.query("DELETE FROM feed_entries WHERE user_id = \(uid)", logger: store.logger)
        try await c.query("DELETE FROM feed_heads WHERE user_id = \(uid)", logger: store.logger)
        try await c.query("DELETE FROM calendar_feeds WHERE user_id = \(uid)", logger: store.logger)
        try await c.query("DELETE FROM users WHERE user_id = \(uid)", logger: store.logger)
        try await c.query("DELETE FROM user_tiers WHERE user_id = \(uid)", logger: store.logger)
        try await c.query("DELETE FROM group_members WHERE user_id = \(uid)", logger: store.logger)
    }
}
