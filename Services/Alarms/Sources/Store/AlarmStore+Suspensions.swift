import Contracts
import Foundation
import Persistence
import PostgresNIO

/// The SQL of what a downgrade took away, kept to give back on an upgrade (§9.4): the sharing
/// of alarms whose owner's Premium ended (`suspended_shares`), and the alarms switched off by
/// the Free limit (`tier_deactivations`).
extension AlarmStore {
    /// `owner`'s live alarms that share anything (members or a group).
    func sharingAlarmIDs(ownedBy owner: String, on c: PostgresConnection) async throws -> [String] {
        try await c.query("""
            SELECT id FROM alarms WHERE owner_id = \(owner) AND deleted_at IS NULL AND (cardinality(shared_with) > 0 OR group_id IS NOT NULL)
            ORDER BY id
            """, logger: logger).all(String.self)
    }

    /// Keeps what `alarm` shared before its sharing was suspended (a later suspension of the
    /// same alarm keeps the first record: it holds what the owner set up).
    func suspend(_ alarm: String, owner: String, _ kept: AlarmSharing.Suspended, on c: PostgresConnection) async throws {
        try await c.query("""
            INSERT INTO suspended_shares (alarm_id, owner_id, shared_with, group_id, assigned_to)
            VALUES (\(alarm), \(owner), \(kept.sharedWith), \(kept.groupId), \(kept.assignedTo))
            ON CONFLICT (alarm_id) DO NOTHING
            """, logger: logger)
    }

    /// Takes `owner`'s suspended sharing away (deleted) to restore it, by alarm.
    func takeSuspended(ownedBy owner: String, on c: PostgresConnection) async throws -> [(alarm: String, kept: AlarmSharing.Suspended)] {
        let rows = try await c.query("""
            DELETE FROM suspended_shares WHERE owner_id = \(owner) RETURNING alarm_id, shared_with, group_id, assigned_to
            """, logger: logger)
        var out: [(String, AlarmSharing.Suspended)] = []
        for try await (id, members, group, assignee) in rows.decode((String, [String], String?, String?).self) {
            out.append((id, AlarmSharing.Suspended(sharedWith: members, groupId: group, assignedTo: assignee)))
        }
        return out.sorted { $0.0 < $1.0 }
    }

    /// Takes `members` off the suspended sharing of `group`'s alarms (they left the group while
    /// it was suspended); `detach` also forgets the group (it was deleted).
    func dropFromSuspended(group: String, members: [String], detach: Bool, on c: PostgresConnection) async throws {
        try await c.query("""
            UPDATE suspended_shares SET shared_with = ARRAY(SELECT m FROM unnest(shared_with) m WHERE m <> ALL(\(members))),
                group_id = CASE WHEN \(detach) THEN NULL ELSE group_id END,
                assigned_to = CASE WHEN assigned_to = ANY(\(members)) THEN NULL ELSE assigned_to END
            WHERE group_id = \(group)
            """, logger: logger)
    }

    /// Forgets a deleted account in what others' downgrades kept, and what its own kept.
    func forgetSuspensions(of user: String, on c: PostgresConnection) async throws {
        try await c.query("DELETE FROM suspended_shares WHERE owner_id = \(user)", logger: logger)
        try await c.query("DELETE FROM tier_deactivations WHERE owner_id = \(user)", logger: logger)
        try await c.query("""
            UPDATE suspended_shares SET shared_with = array_remove(shared_with, \(user)),
                assigned_to = NULLIF(assigned_to, \(user))
            WHERE \(user) = ANY(shared_with) OR assigned_to = \(user)
            """, logger: logger)
    }

    /// Records that the Free limit switched `alarm` off.
    func recordTierDeactivation(_ alarm: String, owner: String, on c: PostgresConnection) async throws {
        try await c.query("""
            INSERT INTO tier_deactivations (alarm_id, owner_id) VALUES (\(alarm), \(owner)) ON CONFLICT (alarm_id) DO NOTHING
            """, logger: logger)
    }

    /// Takes away (deletes) the records of `owner`'s alarms the Free limit switched off.
    func takeTierDeactivations(ownedBy owner: String, on c: PostgresConnection) async throws -> [String] {
        try await c.query("DELETE FROM tier_deactivations WHERE owner_id = \(owner) RETURNING alarm_id", logger: logger)
            .all(String.self).sorted()
    }
}
