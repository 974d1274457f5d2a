import NotificationsCore
import Contracts
import Foundation
import Logging
import PostgresNIO

/// The groups read model of notifications (from the accounts stream): each group's name and
/// its members' names and completion-push choice, for the texts and recipients of fires and
/// completions of group alarms.
extension NotificationStore {
    /// Replaces what is known of a group.
    func upsertGroup(_ e: AccountsEvents.GroupUpserted, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("""
            INSERT INTO groups (id, name) VALUES (\(e.group.id), \(e.group.name)) ON CONFLICT (id) DO UPDATE SET name = excluded.name
            """, logger: logger)
        try await c.query("DELETE FROM group_members WHERE group_id = \(e.group.id)", logger: logger)
        try await c.query("""
            INSERT INTO group_members (group_id, user_id, display_name, completion_pushes)
            SELECT \(e.group.id), u, NULLIF(n, ''), p FROM unnest(\(e.members.map(\.uid))::text[], \(e.members.map { $0.displayName ?? "" })::text[],
                                                    \(e.members.map { $0.completionPushes ?? true })::boolean[]) AS x(u, n, p)
            """, logger: logger)
    }

    func deleteGroup(_ id: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("DELETE FROM groups WHERE id = \(id)", logger: logger)
    }

    /// Forgets a deleted account in every group.
    func forgetGroupMember(_ uid: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("DELETE FROM group_members WHERE user_id = \(uid)", logger: logger)
    }

    /// What the texts of these groups' alarms need, by group id (groups not known are left out).
    func groupTexts(_ ids: Set<String>, on c: PostgresConnection, logger: Logger) async throws -> [String: NotificationRenderer.GroupText] {
        guard !ids.isEmpty else { return [:] }
        var out: [String: NotificationRenderer.GroupText] = [:]
        let rows = try await c.query("""
            SELECT g.id, g.name, m.user_id, m.display_name, m.completion_pushes
            FROM groups g LEFT JOIN group_members m ON m.group_id = g.id WHERE g.id = ANY(\(Array(ids))::text[])
            """, logger: logger)
        for try await (id, name, uid, member, pushes) in rows.decode((String, String, String?, String?, Bool?).self) {
            var g = out[id] ?? NotificationRenderer.GroupText(name: name)
            if let uid {
                if let member { g.names[uid] = member }
                if pushes == false { g.completionPushesOff.insert(uid) }
            }
            out[id] = g
        }
        return out
    }
}
