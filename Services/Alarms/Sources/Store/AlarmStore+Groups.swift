import Contracts
import Foundation
import Persistence
import PostgresNIO

/// The SQL of the group-membership read model (``GroupEventHandlers``).
extension AlarmStore {
    /// Deletes every membership of `group`.
    func deleteGroupMembers(group: String, on c: PostgresConnection) async throws {
        try await c.query("DELETE FROM group_members WHERE group_id = \(group)", logger: logger)
    }

    /// Records `members` (user and role) as the members of `group`.
    func insertGroupMembers(group: String, members: [AccountsEvents.MemberRole], on c: PostgresConnection) async throws {
        try await c.query("""
            INSERT INTO group_members (group_id, user_id, role)
            SELECT \(group), u, r FROM unnest(\(members.map(\.uid))::text[], \(members.map(\.role.rawValue))::text[]) AS x(u, r)
            """, logger: logger)
    }

    /// Orders the reads of `group`'s members into an alarm (a creation, an alarm joining the
    /// group: `exclusive` false, many at once) against a change of its membership (the accounts
    /// stream's group events: `exclusive`), until the transaction ends. Without it, an alarm
    /// created while a member was being added read the members before the change and committed
    /// after the change had reshared the group's alarms, and never had that member: a soak run
    /// left 23 member-alarm pairs out (fire pushes the member never got).
    func lockGroup(_ group: String, exclusive: Bool, on c: PostgresConnection) async throws {
        try await c.lockUntilCommit("alarms.group:" + group, shared: !exclusive, logger: logger)
    }

    /// Records the rules of `group` (who edits its alarms, its pending window).
    func upsertGroupSettings(group: String, _ settings: GroupSettings, on c: PostgresConnection) async throws {
        try await c.query("""
            INSERT INTO groups (id, alarm_editors, pending_window_minutes)
            VALUES (\(group), \(settings.alarmEditors), \(settings.pendingWindowMinutes.map(Int32.init)))
            ON CONFLICT (id) DO UPDATE SET alarm_editors = excluded.alarm_editors, pending_window_minutes = excluded.pending_window_minutes
            """, logger: logger)
    }

    /// Forgets a deleted group's rules.
    func deleteGroupSettings(group: String, on c: PostgresConnection) async throws {
        try await c.query("DELETE FROM groups WHERE id = \(group)", logger: logger)
    }

    /// The rules of `group` as accounts last published them (the defaults when unknown).
    func groupSettings(group: String, on c: PostgresConnection) async throws -> GroupSettings {
        let rows = try await c.query("SELECT alarm_editors, pending_window_minutes FROM groups WHERE id = \(group)", logger: logger)
        for try await (editors, window) in rows.decode((String, Int32?).self) {
            return GroupSettings(alarmEditors: editors, pendingWindowMinutes: window.map(Int.init))
        }
        return GroupSettings()
    }

    /// Whether `user` creates and edits `group`'s alarms under its rules (nil: not a member).
    func mayEditGroupAlarms(group: String, user: String, on c: PostgresConnection) async throws -> Bool? {
        guard let role = try await groupRole(group: group, user: user, on: c) else { return nil }
        return try await groupSettings(group: group, on: c).mayEditAlarms(role)
    }

    /// Whether `group`'s owner is on Premium (their plan covers the group's alarms).
    func groupOwnerIsPremium(_ group: String, on c: PostgresConnection) async throws -> Bool {
        let tier = try await c.query("""
            SELECT t.tier FROM group_members m JOIN user_tiers t ON t.user_id = m.user_id WHERE m.group_id = \(group) AND m.role = 'owner'
            """, logger: logger).first(String.self)
        return tier == Tier.premium.rawValue
    }

    /// The live (not deleted) alarms of `group`, in id order.
    func liveAlarmIDs(inGroup group: String, on c: PostgresConnection) async throws -> [String] {
        try await c.query("SELECT id FROM alarms WHERE group_id = \(group) AND deleted_at IS NULL ORDER BY id", logger: logger)
            .all(String.self)
    }
}
