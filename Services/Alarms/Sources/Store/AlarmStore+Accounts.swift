import Contracts
import Foundation
import Persistence
import PostgresNIO

/// The SQL of the accounts read model (``AccountsEventHandlers``): users' names, and purging a
/// deleted account's rows.
extension AlarmStore {
    /// Records an account's display name, email and time zone.
    func upsertUser(_ user: AccountsEvents.UserUpserted, on c: PostgresConnection) async throws {
        try await c.query("""
            INSERT INTO users (user_id, display_name, email, timezone) VALUES (\(user.uid), \(user.displayName), \(user.email), \(user.timezone))
            ON CONFLICT (user_id) DO UPDATE SET display_name = excluded.display_name, email = excluded.email, timezone = excluded.timezone
            """, logger: logger)
    }

    // MARK: Purging an account

    /// The live (not deleted) alarms `user` owns.
    func liveAlarmIDs(ownedBy user: String, on c: PostgresConnection) async throws -> [String] {
        try await c.query("SELECT id FROM alarms WHERE owner_id = \(user) AND deleted_at IS NULL", logger: logger).all(String.self)
    }

    /// Others' live alarms shared with or assigned to `user`.
    func liveAlarmIDs(sharedWithOrAssignedTo user: String, on c: PostgresConnection) async throws -> [String] {
        try await c.query("""
            SELECT id FROM alarms WHERE (\(user) = ANY(shared_with) OR assigned_to = \(user)) AND deleted_at IS NULL AND owner_id <> \(user)
            """, logger: logger).all(String.self)
    }

    /// Every alarm `user` owns, deleted ones included.
    func alarmIDs(ownedBy user: String, on c: PostgresConnection) async throws -> [String] {
        try await c.query("SELECT id FROM alarms WHERE owner_id = \(user)", logger: logger).all(String.self)
    }

    /// Deletes the completion logs of `alarmIds`.
    func deleteCompletions(ofAlarms alarmIds: [String], on c: PostgresConnection) async throws {
        try await c.query("DELETE FROM completions WHERE alarm_id = ANY(\(alarmIds)::text[])", logger: logger)
    }

    /// Deletes the snoozes of `alarmIds`.
    func deleteSnoozes(ofAlarms alarmIds: [String], on c: PostgresConnection) async throws {
        try await c.query("DELETE FROM snoozes WHERE alarm_id = ANY(\(alarmIds)::text[])", logger: logger)
    }

    /// Deletes every alarm row `user` owns.
    func deleteAlarms(ownedBy user: String, on c: PostgresConnection) async throws {
        try await c.query("DELETE FROM alarms WHERE owner_id = \(user)", logger: logger)
    }

    /// Takes `user` off the members and the assignee of deleted alarms (tombstones).
    func removeFromTombstones(_ user: String, on c: PostgresConnection) async throws {
        try await c.query("""
            UPDATE alarms SET shared_with = array_remove(shared_with, \(user)), assigned_to = NULLIF(assigned_to, \(user))
            WHERE deleted_at IS NOT NULL AND (\(user) = ANY(shared_with) OR assigned_to = \(user))
            """, logger: logger)
    }

    /// Forgets `user` everywhere but their own alarms (which the purge deletes first): their
    /// name leaves the completion logs and snoozes they made (the rows stay), and their feed,
    /// calendar feeds, read-model rows and group memberships go. The statements run in this order.
    func forgetUser(_ user: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE completions SET user_id = NULL, user_display_name = NULL WHERE user_id = \(user)", logger: logger)
        try await c.query("UPDATE snoozes SET updated_by = '' WHERE updated_by = \(user)", logger: logger)
        try await c.query("DELETE FROM feed_entries WHERE user_id = \(user)", logger: logger)
        try await c.query("DELETE FROM feed_heads WHERE user_id = \(user)", logger: logger)
        try await c.query("DELETE FROM calendar_feeds WHERE user_id = \(user)", logger: logger)
        try await c.query("DELETE FROM users WHERE user_id = \(user)", logger: logger)
        try await c.query("DELETE FROM user_tiers WHERE user_id = \(user)", logger: logger)
        try await c.query("DELETE FROM group_members WHERE user_id = \(user)", logger: logger)
    }
}
