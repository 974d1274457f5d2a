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

    /// The live (not deleted) alarms of `group`, in id order.
    func liveAlarmIDs(inGroup group: String, on c: PostgresConnection) async throws -> [String] {
        try await c.query("SELECT id FROM alarms WHERE group_id = \(group) AND deleted_at IS NULL ORDER BY id", logger: logger)
            .all(String.self)
    }
}
