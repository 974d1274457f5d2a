import Contracts
import Foundation
import Logging
import Messaging
import Outbox
import Persistence
import PostgresNIO

/// Groups and their members in the accounts schema, and the events that tell the other
/// services (alarms keeps who may see group alarms; invitations and notifications names).
struct GroupStore: Sendable {
    let database: Database
    let outbox: OutboxWriter

    var logger: Logger { database.logger }

    static let maxMembers = 10

    /// The group locked for a change, or nil.
    func lock(_ id: String, on c: PostgresConnection) async throws -> Group? {
        let rows = try await c.query("""
            SELECT id, name, description, owner_id, icon_name, max_members, created_at, updated_at, alarm_editors, pending_window_minutes
            FROM groups WHERE id = \(id) FOR UPDATE
            """, logger: logger)
        guard let (id, name, description, owner, icon, max, created, updated, editors, window)
            = try await rows.decode((String, String, String?, String, String, Int32, Date, Date, String, Int32?).self).first(where: { _ in true })
        else { return nil }
        let members = try await memberRoles(id, on: c)
        return Group(id: id, name: name, description: description, ownerId: owner, memberIds: members.map(\.uid), memberCount: members.count,
                     maxMembers: Int(max), iconName: icon, createdAt: created, updatedAt: updated,
                     settings: GroupSettings(alarmEditors: editors, pendingWindowMinutes: window.map(Int.init)))
    }

    func memberRoles(_ group: String, on c: PostgresConnection) async throws -> [AccountsEvents.MemberRole] {
        var out: [AccountsEvents.MemberRole] = []
        let rows = try await c.query("""
            SELECT m.user_id, m.role, u.display_name, m.completion_pushes FROM group_members m LEFT JOIN users u ON u.id = m.user_id
            WHERE m.group_id = \(group) ORDER BY m.joined_at, m.user_id
            """, logger: logger)
        for try await (uid, role, name, pushes) in rows.decode((String, String, String?, Bool).self) {
            out.append(.init(uid: uid, role: try Self.role(role), displayName: name, completionPushes: pushes))
        }
        return out
    }

    /// A stored role (the column's CHECK allows only the three).
    static func role(_ stored: String) throws -> GroupRole {
        guard let role = GroupRole(rawValue: stored) else { throw ServiceError.internal("unknown group role \(stored)") }
        return role
    }

    func role(of user: String, in group: String, on c: PostgresConnection) async throws -> GroupRole? {
        try await c.query("SELECT role FROM group_members WHERE group_id = \(group) AND user_id = \(user)", logger: logger)
            .first(String.self).map(Self.role)
    }

    func members(_ group: String, on c: PostgresConnection) async throws -> [GroupMember] {
        var out: [GroupMember] = []
        let rows = try await c.query("""
            SELECT m.user_id, u.display_name, u.email, u.photo_url, m.role, m.joined_at, m.invited_by, m.completion_pushes
            FROM group_members m JOIN users u ON u.id = m.user_id WHERE m.group_id = \(group) ORDER BY m.joined_at, m.user_id
            """, logger: logger)
        for try await (uid, name, email, photo, role, joined, invitedBy, pushes)
            in rows.decode((String, String, String, String?, String, Date, String?, Bool).self) {
            out.append(GroupMember(uid: uid, displayName: name, email: email, photoURL: photo, role: try Self.role(role), joinedAt: joined,
                                   invitedBy: invitedBy, completionPushes: pushes))
        }
        return out
    }

    /// Ids of the groups `user` belongs to.
    /// The most groups a listing holds (the oldest memberships first).
    static let maxListed = 200

    func groupIds(of user: String, limit: Int = Int(Int32.max), on c: PostgresConnection) async throws -> [String] {
        try await c.query("SELECT group_id FROM group_members WHERE user_id = \(user) ORDER BY joined_at, group_id LIMIT \(limit)", logger: logger).all(String.self)
    }

    /// Touches the group and publishes its state (re-read), with who left.
    @discardableResult
    func changed(_ id: String, removed: [String] = [], actor: String?, on c: PostgresConnection) async throws -> Group {
        try await c.query("UPDATE groups SET updated_at = now() WHERE id = \(id)", logger: logger)
        guard let g = try await lock(id, on: c) else { throw ServiceError(.notFound, "no group \(id)") }
        _ = try await outbox.append(AccountsEvents.groupUpserted,
                                    AccountsEvents.GroupUpserted(group: g, members: try await memberRoles(id, on: c), removed: removed),
                                    actor: actor, on: c)
        return g
    }

    func delete(_ g: Group, actor: String?, on c: PostgresConnection) async throws {
        try await c.query("DELETE FROM groups WHERE id = \(g.id)", logger: logger)
        _ = try await outbox.append(AccountsEvents.groupDeleted, AccountsEvents.GroupDeleted(groupId: g.id, memberIds: g.memberIds), actor: actor, on: c)
    }

    /// Inserts a group row (members go in with ``insertOwner(_:of:on:)`` and ``insertMember(_:of:invitedBy:on:)``).
    func insert(id: String, name: String, description: String?, owner: String, icon: String, on c: PostgresConnection) async throws {
        try await c.query("""
            INSERT INTO groups (id, name, description, owner_id, icon_name, max_members) VALUES (\(id), \(name), \(description), \(owner), \(icon), \(Int32(Self.maxMembers)))
            """, logger: logger)
    }

    /// Adds `uid` to the group as its owner.
    func insertOwner(_ uid: String, of group: String, on c: PostgresConnection) async throws {
        try await c.query("INSERT INTO group_members (group_id, user_id, role) VALUES (\(group), \(uid), 'owner')", logger: logger)
    }

    /// Adds `uid` to the group as a member, invited by `invitedBy`.
    func insertMember(_ uid: String, of group: String, invitedBy: String, on c: PostgresConnection) async throws {
        try await c.query("""
            INSERT INTO group_members (group_id, user_id, role, invited_by) VALUES (\(group), \(uid), 'member', \(invitedBy))
            """, logger: logger)
    }

    /// Sets who creates and edits the group's alarms (`owner`, `admins`, `everyone`).
    func setAlarmEditors(_ editors: String, of id: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE groups SET alarm_editors = \(editors) WHERE id = \(id)", logger: logger)
    }

    /// Sets the group's pending window (nil: the service's).
    func setPendingWindow(_ minutes: Int?, of id: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE groups SET pending_window_minutes = \(minutes.map(Int32.init)) WHERE id = \(id)", logger: logger)
    }

    /// Turns a member's completion pushes on or off.
    func setCompletionPushes(_ on: Bool, of uid: String, in group: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE group_members SET completion_pushes = \(on) WHERE group_id = \(group) AND user_id = \(uid)", logger: logger)
    }

    /// Renames the group.
    func rename(_ id: String, to name: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE groups SET name = \(name) WHERE id = \(id)", logger: logger)
    }

    /// Removes the group's description.
    func clearDescription(of id: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE groups SET description = NULL WHERE id = \(id)", logger: logger)
    }

    /// Sets the group's description.
    func setDescription(_ description: String, of id: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE groups SET description = \(description) WHERE id = \(id)", logger: logger)
    }

    /// Sets the group's icon.
    func setIcon(_ icon: String, of id: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE groups SET icon_name = \(icon) WHERE id = \(id)", logger: logger)
    }

    /// Sets a member's role.
    func setRole(_ role: GroupRole, of uid: String, in group: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE group_members SET role = \(role.rawValue) WHERE group_id = \(group) AND user_id = \(uid)", logger: logger)
    }

    /// Hands the group from its owner (who stays, as an admin) to member `heir`.
    func transfer(_ group: String, from owner: String, to heir: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE group_members SET role = 'admin' WHERE group_id = \(group) AND user_id = \(owner)", logger: logger)
        try await makeOwner(heir, of: group, on: c)
    }

    /// Makes member `uid` the group's owner (its role and `owner_id`); the previous owner's row is left as it is.
    func makeOwner(_ uid: String, of group: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE group_members SET role = 'owner' WHERE group_id = \(group) AND user_id = \(uid)", logger: logger)
        try await c.query("UPDATE groups SET owner_id = \(uid) WHERE id = \(group)", logger: logger)
    }

    /// Takes `uid` out of the group.
    func removeMember(_ uid: String, from group: String, on c: PostgresConnection) async throws {
        try await c.query("DELETE FROM group_members WHERE group_id = \(group) AND user_id = \(uid)", logger: logger)
    }

    /// Forgets `uid` as the inviter of any member.
    func clearInviter(_ uid: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE group_members SET invited_by = NULL WHERE invited_by = \(uid)", logger: logger)
    }

    /// An account goes: it leaves every group; a group it owned passes to its longest-standing
    /// admin, else its longest-standing member, and goes only when nobody else is in it.
    func removeUser(_ uid: String, on c: PostgresConnection) async throws {
        for id in try await groupIds(of: uid, on: c) {
            guard let g = try await lock(id, on: c) else { continue }
            if g.ownerId == uid {
                let heir = try await c.query("""
                    SELECT user_id FROM group_members WHERE group_id = \(id) AND user_id <> \(uid)
                    ORDER BY role = 'admin' DESC, joined_at, user_id LIMIT 1
                    """, logger: logger).first(String.self)
                guard let heir else {
                    try await delete(g, actor: nil, on: c)
                    continue
                }
                try await makeOwner(heir, of: id, on: c)
            }
            try await removeMember(uid, from: id, on: c)
            try await changed(id, removed: [uid], actor: nil, on: c)
        }
    }
}
