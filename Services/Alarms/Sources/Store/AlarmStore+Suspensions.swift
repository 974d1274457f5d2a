import AlarmsCore
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
        try await suspended(c.query("""
            DELETE FROM suspended_shares WHERE owner_id = \(owner) RETURNING alarm_id, shared_with, group_id, assigned_to
            """, logger: logger))
    }

    /// Takes away (deleted) the suspended sharing of other people's alarms in the groups `owner`
    /// owns: their plan covered them, and it is Premium again.
    func takeSuspended(inGroupsOwnedBy owner: String, on c: PostgresConnection) async throws -> [(alarm: String, kept: AlarmSharing.Suspended)] {
        try await suspended(c.query("""
            DELETE FROM suspended_shares s USING group_members m
            WHERE m.group_id = s.group_id AND m.role = 'owner' AND m.user_id = \(owner) AND s.owner_id <> \(owner)
            RETURNING s.alarm_id, s.shared_with, s.group_id, s.assigned_to
            """, logger: logger))
    }

    private func suspended(_ rows: PostgresRowSequence) async throws -> [(alarm: String, kept: AlarmSharing.Suspended)] {
        var out: [(String, AlarmSharing.Suspended)] = []
        for try await (id, members, group, assignee) in rows.decode((String, [String], String?, String?).self) {
            out.append((id, AlarmSharing.Suspended(sharedWith: members, groupId: group, assignedTo: assignee)))
        }
        return out.sorted { $0.0 < $1.0 }
    }

    /// The live alarms in groups `owner` owns whose owners are someone else below Premium:
    /// `owner`'s plan is what lets them share (``AlarmRules/checkTier(_:alarm:previous:groupCovered:)``).
    func coveredAlarmIDs(inGroupsOwnedBy owner: String, on c: PostgresConnection) async throws -> [String] {
        try await c.query("""
            SELECT a.id FROM alarms a JOIN group_members m ON m.group_id = a.group_id AND m.role = 'owner' AND m.user_id = \(owner)
            WHERE a.owner_id <> \(owner) AND a.deleted_at IS NULL
              AND NOT EXISTS (SELECT 1 FROM user_tiers t WHERE t.user_id = a.owner_id AND t.tier = 'premium')
            ORDER BY a.id
            """, logger: logger).all(String.self)
    }

    /// The members kept in `alarm`'s suspended sharing, its row locked (nil: none is kept).
    func lockSuspended(_ alarm: String, on c: PostgresConnection) async throws -> AlarmSharing.Suspended? {
        let rows = try await c.query("""
            SELECT shared_with, group_id, assigned_to FROM suspended_shares WHERE alarm_id = \(alarm) FOR UPDATE
            """, logger: logger)
        for try await (members, group, assignee) in rows.decode(([String], String?, String?).self) {
            return AlarmSharing.Suspended(sharedWith: members, groupId: group, assignedTo: assignee)
        }
        return nil
    }

    /// Takes `member` off what `alarm`'s suspension kept (they left, or its owner took them off):
    /// the sharing that comes back on an upgrade leaves them out.
    func dropSuspendedMember(_ member: String, alarm: String, on c: PostgresConnection) async throws {
        try await c.query("""
            UPDATE suspended_shares SET shared_with = array_remove(shared_with, \(member)), assigned_to = NULLIF(assigned_to, \(member))
            WHERE alarm_id = \(alarm)
            """, logger: logger)
    }

    /// Adds `member` to what `alarm`'s suspension keeps (they accepted an invitation to it while
    /// its owner is below Premium): they join when the sharing comes back.
    func keepSuspendedMember(_ member: String, alarm: String, owner: String, on c: PostgresConnection) async throws {
        try await c.query("""
            INSERT INTO suspended_shares (alarm_id, owner_id, shared_with, group_id, assigned_to)
            VALUES (\(alarm), \(owner), ARRAY[\(member)]::text[], NULL, NULL)
            ON CONFLICT (alarm_id) DO UPDATE SET shared_with = CASE WHEN \(member) = ANY(suspended_shares.shared_with)
                THEN suspended_shares.shared_with ELSE array_append(suspended_shares.shared_with, \(member)) END
            """, logger: logger)
    }

    /// Takes `members` off the suspended sharing of `group`'s alarms (they left the group while
    /// it was suspended); the alarms they own leave the group, keeping only people not in it
    /// (`remaining`: its members now), as live alarms do; `detach` also forgets the group (it was deleted).
    func dropFromSuspended(group: String, members: [String], remaining: [String], detach: Bool, on c: PostgresConnection) async throws {
        try await c.query("""
            UPDATE suspended_shares SET
                shared_with = ARRAY(SELECT m FROM unnest(shared_with) m WHERE m <> ALL(\(members))
                                    AND (owner_id <> ALL(\(members)) OR m <> ALL(\(remaining)))),
                group_id = CASE WHEN \(detach) OR owner_id = ANY(\(members)) THEN NULL ELSE group_id END,
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
