import Contracts
import Foundation
import Persistence
import PostgresNIO

/// The SQL of the accounts read model (``AccountsEventHandlers``): users' names, and purging a
/// deleted account's rows.
extension AlarmStore {
    /// Records an account's display name, email, time zone and default snooze length.
    func upsertUser(_ user: AccountsEvents.UserUpserted, on c: PostgresConnection) async throws {
        let snooze = user.defaultSnoozeMinutes.map(Int32.init)
        try await c.query("""
            INSERT INTO users (user_id, display_name, email, timezone, default_snooze_minutes, home_zone)
            VALUES (\(user.uid), \(user.displayName), \(user.email), \(user.timezone), \(snooze), \(user.homeTimezone))
            ON CONFLICT (user_id) DO UPDATE SET display_name = excluded.display_name, email = excluded.email, timezone = excluded.timezone,
                default_snooze_minutes = coalesce(excluded.default_snooze_minutes, users.default_snooze_minutes),
                home_zone = excluded.home_zone
            """, logger: logger)
    }

    /// `user`'s profile and home zones as the read model holds them (nil: not seen yet).
    func zones(of user: String, on c: PostgresConnection) async throws -> (profile: String, home: String?)? {
        for try await (profile, home) in try await c.query("SELECT timezone, home_zone FROM users WHERE user_id = \(user)",
                                                           logger: logger).decode((String, String?).self) {
            return (profile, home)
        }
        return nil
    }

    /// `owner`'s live fixed alarms in `zone`.
    func fixedAlarmIDs(ownedBy owner: String, in zone: String, on c: PostgresConnection) async throws -> [String] {
        try await c.query("""
            SELECT id FROM alarms WHERE owner_id = \(owner) AND deleted_at IS NULL
                AND (schedule->>'floating')::boolean IS NOT TRUE AND schedule->>'timezone' = \(zone)
            ORDER BY id
            """, logger: logger).all(String.self)
    }

    /// Records `zone` as `user`'s current zone as of `at` (their floating alarms follow it),
    /// unless a later sighting is recorded; answers whether the current zone changed.
    func moveUser(_ user: String, to zone: String, at: Date, on c: PostgresConnection) async throws -> Bool {
        try await c.query("""
            UPDATE users SET current_zone = \(zone), current_zone_at = \(at)
            WHERE user_id = \(user) AND (current_zone_at IS NULL OR current_zone_at <= \(at)) AND current_zone IS DISTINCT FROM \(zone)
            RETURNING 1
            """, logger: logger).first(Int32.self) != nil
    }

    /// `owner`'s live floating alarms whose zone is not `zone`.
    func floatingAlarmIDs(ownedBy owner: String, notIn zone: String, on c: PostgresConnection) async throws -> [String] {
        try await c.query("""
            SELECT id FROM alarms WHERE owner_id = \(owner) AND deleted_at IS NULL
                AND (schedule->>'floating')::boolean IS TRUE AND schedule->>'timezone' IS DISTINCT FROM \(zone)
            ORDER BY id
            """, logger: logger).all(String.self)
    }

    /// `user`'s default snooze length (US-7.1), nil when the read model has none.
    func defaultSnoozeMinutes(of user: String, on c: PostgresConnection) async throws -> Int? {
        try await c.query("SELECT default_snooze_minutes FROM users WHERE user_id = \(user)", logger: logger)
            .first(Int32?.self).flatMap { $0 }.map(Int.init)
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
        try await c.query("DELETE FROM photo_uploads WHERE user_id = \(user)", logger: logger)
    }
}
