import Contracts
import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO

/// Groups (`chronir-api.md` §5, §11): Premium creates; members read; owner and admins edit;
/// the owner deletes, changes roles and transfers ownership; members leave, owner and admins
/// remove. Someone outside a group cannot tell it exists (404).
struct GroupHandlers: Sendable {
    let store: GroupStore
    let accounts: AccountsStore
    var database: Database { store.database }

    func register(into router: inout RPCRouter) {
        router.on(GroupMethods.Create.self) { req, ctx in try await create(req, actor: try ctx.requireActor()) }
        router.on(GroupMethods.List.self) { _, ctx in try await list(actor: try ctx.requireActor()) }
        router.on(GroupMethods.Get.self) { req, ctx in
            let actor = try ctx.requireActor()
            return try await database.transaction { c in try await visible(req.groupId, actor: actor, on: c).group }
        }
        router.on(GroupMethods.Update.self) { req, ctx in try await update(req, actor: try ctx.requireActor()) }
        router.on(GroupMethods.Delete.self) { req, ctx in try await delete(req.groupId, actor: try ctx.requireActor()) }
        router.on(GroupMethods.Members.self) { req, ctx in
            let actor = try ctx.requireActor()
            return try await database.transaction { c in
                let (_, role) = try await visible(req.groupId, actor: actor, on: c)
                return .init(members: Self.addressesShown(try await store.members(req.groupId, on: c), to: actor, role: role))
            }
        }
        router.on(GroupMethods.SetRole.self) { req, ctx in try await setRole(req, actor: try ctx.requireActor()) }
        router.on(GroupMethods.RemoveMember.self) { req, ctx in try await remove(req, actor: try ctx.requireActor()) }
        router.on(GroupMethods.Transfer.self) { req, ctx in try await transfer(req, actor: try ctx.requireActor()) }
        router.on(GroupMethods.AddMember.self) { req, _ in try await add(req) }
        router.on(GroupMethods.Membership.self) { req, _ in
            try await database.transaction { c in
                guard let g = try await store.lock(req.groupId, on: c) else { throw Self.notFound(req.groupId) }
                return .init(group: g, role: try await store.role(of: req.uid, in: g.id, on: c))
            }
        }
    }

    static func notFound(_ id: String) -> ServiceError { ServiceError(.notFound, "no group \(id)") }

    /// Members' addresses as `actor` (of `role`) may see them (issue 74): all of them to the
    /// owner and the admins, who invite and manage; otherwise only the actor's own — members
    /// see each other's names, not where to write to them (an anonymous account that joined
    /// through a forwarded open link would otherwise read everyone's address). Hidden
    /// addresses are empty strings, so clients that read `email` as required keep working.
    static func addressesShown(_ members: [GroupMember], to actor: String, role: GroupRole) -> [GroupMember] {
        guard !role.manages else { return members }
        return members.map { m in
            var m = m
            if m.uid != actor { m.email = "" }
            return m
        }
    }

    /// The group and the actor's role; 404 for non-members (they cannot learn it exists).
    func visible(_ id: String, actor: String, on c: PostgresConnection) async throws -> (group: Group, role: GroupRole) {
        guard let g = try await store.lock(id, on: c), let role = try await store.role(of: actor, in: id, on: c) else { throw Self.notFound(id) }
        return (g, role)
    }

    /// `value` trimmed, 1…`max` characters and without control characters (``HumanText``;
    /// the description alone may hold line breaks).
    static func text(_ value: String, field: String, max: Int) throws -> String {
        let t = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !t.isEmpty, t.count <= max else { throw ServiceError(.validationFailed, "\(field) must be 1...\(max) characters") }
        try HumanText.check(t, field: field, multiline: field == "description")
        return t
    }

    func create(_ req: GroupMethods.Create.Request, actor: String) async throws -> Group {
        let name = try Self.text(req.name, field: "name", max: 50)
        let description = try req.description.map { try Self.text($0, field: "description", max: 200) }
        let icon = try Self.text(req.iconName ?? "house", field: "iconName", max: 40)
        let g: Group = try await store.outbox.transaction { c in
            guard let user = try await accounts.user(id: actor, on: c) else { throw ServiceError(.authRequired, "this account no longer exists") }
            guard user.tier == .premium else { throw ServiceError(.tierRequired, "creating a group needs Premium") }
            let id = UUIDv7.string()
            try await store.insert(id: id, name: name, description: description, owner: actor, icon: icon, on: c)
            try await store.insertOwner(actor, of: id, on: c)
            return try await store.changed(id, actor: actor, on: c)
        }
        return g
    }

    func list(actor: String) async throws -> GroupMethods.List.Response {
        try await database.transaction { c in
            var groups: [Group] = []
            for id in try await store.groupIds(of: actor, limit: GroupStore.maxListed, on: c) {
                if let g = try await store.lock(id, on: c) { groups.append(g) }
            }
            return .init(groups: groups)
        }
    }

    func update(_ req: GroupMethods.Update.Request, actor: String) async throws -> Group {
        let g: Group = try await store.outbox.transaction { c in
            let (g, role) = try await visible(req.groupId, actor: actor, on: c)
            guard role.manages else { throw ServiceError(.permissionDenied, "only the owner or an admin edits group \(g.id)") }
            if let n = req.name {
                try await store.rename(g.id, to: try Self.text(n, field: "name", max: 50), on: c)
            }
            switch req.description {
            case .unchanged: break
            case .cleared: try await store.clearDescription(of: g.id, on: c)
            case .set(let d):
                try await store.setDescription(try Self.text(d, field: "description", max: 200), of: g.id, on: c)
            }
            if let i = req.iconName {
                try await store.setIcon(try Self.text(i, field: "iconName", max: 40), of: g.id, on: c)
            }
            if let editors = req.alarmEditors {
                guard GroupSettings.editors.contains(editors) else {
                    throw ServiceError(.validationFailed, "alarmEditors must be owner, admins or everyone")
                }
                // Who may edit the group's alarms is the owner's call (an admin could otherwise lock the owner's peers out).
                guard role == .owner else { throw ServiceError(.permissionDenied, "only the owner decides who edits group \(g.id)'s alarms") }
                try await store.setAlarmEditors(editors, of: g.id, on: c)
            }
            switch req.pendingWindowMinutes {
            case .unchanged: break
            case .cleared: try await store.setPendingWindow(nil, of: g.id, on: c)
            case .set(let m):
                guard GroupSettings.windowRange.contains(m) else {
                    throw ServiceError(.validationFailed, "pendingWindowMinutes must be 15–10080 (or null for the default, 120)")
                }
                try await store.setPendingWindow(m, of: g.id, on: c)
            }
            return try await store.changed(g.id, actor: actor, on: c)
        }
        return g
    }

    func delete(_ id: String, actor: String) async throws -> Empty {
        try await store.outbox.transaction { c in
            let (g, role) = try await visible(id, actor: actor, on: c)
            guard role == .owner else { throw ServiceError(.permissionDenied, "only the owner deletes group \(g.id)") }
            try await store.delete(g, actor: actor, on: c)
        }
        return Empty()
    }

    /// The owner changes a member's role; a member turns their own completion pushes on or off.
    func setRole(_ req: GroupMethods.SetRole.Request, actor: String) async throws -> GroupMember {
        guard req.role != nil || req.completionPushes != nil else {
            throw ServiceError(.validationFailed, "give role (admin or member) or completionPushes (true or false)")
        }
        let newRole = try req.role.map { r -> GroupRole in
            guard let newRole = GroupRole(rawValue: r), newRole != .owner else {
                throw ServiceError(.validationFailed, "role must be admin or member (ownership moves with POST /v1/groups/{id}/transfer)")
            }
            return newRole
        }
        let m: GroupMember = try await store.outbox.transaction { c in
            let (g, role) = try await visible(req.groupId, actor: actor, on: c)
            guard let current = try await store.role(of: req.uid, in: g.id, on: c) else {
                throw ServiceError(.notFound, "\(req.uid) is not a member of group \(g.id)")
            }
            if let pushes = req.completionPushes {
                guard req.uid == actor else { throw ServiceError(.permissionDenied, "members choose their own completion pushes") }
                try await store.setCompletionPushes(pushes, of: req.uid, in: g.id, on: c)
            }
            if let newRole {
                guard role == .owner else { throw ServiceError(.permissionDenied, "only the owner changes roles in group \(g.id)") }
                guard current != .owner else { throw ServiceError(.validationFailed, "the owner's role changes only by transferring ownership") }
                try await store.setRole(newRole, of: req.uid, in: g.id, on: c)
            }
            try await store.changed(g.id, actor: actor, on: c)
            guard let m = try await store.members(g.id, on: c).first(where: { $0.uid == req.uid }) else { throw Self.notFound(g.id) }
            return m
        }
        return m
    }

    func remove(_ req: GroupMethods.MemberRef, actor: String) async throws -> Empty {
        try await store.outbox.transaction { c in
            let (g, role) = try await visible(req.groupId, actor: actor, on: c)
            guard let target = try await store.role(of: req.uid, in: g.id, on: c) else {
                throw ServiceError(.notFound, "\(req.uid) is not a member of group \(g.id)")
            }
            if req.uid == actor {
                guard target != .owner else {
                    throw ServiceError(.validationFailed, "the owner cannot leave; transfer ownership first or delete the group")
                }
            } else {
                guard role.manages else {
                    throw ServiceError(.permissionDenied, "only the owner or an admin removes members of group \(g.id)")
                }
                guard target != .owner else { throw ServiceError(.permissionDenied, "the owner cannot be removed") }
                guard role == .owner || target == .member else { throw ServiceError(.permissionDenied, "only the owner removes an admin") }
            }
            try await store.removeMember(req.uid, from: g.id, on: c)
            try await store.changed(g.id, removed: [req.uid], actor: actor, on: c)
        }
        return Empty()
    }

    func transfer(_ req: GroupMethods.MemberRef, actor: String) async throws -> Group {
        let g: Group = try await store.outbox.transaction { c in
            let (g, role) = try await visible(req.groupId, actor: actor, on: c)
            guard role == .owner else { throw ServiceError(.permissionDenied, "only the owner transfers group \(g.id)") }
            guard req.uid != actor else { throw ServiceError(.validationFailed, "you already own group \(g.id)") }
            guard try await store.role(of: req.uid, in: g.id, on: c) != nil else {
                throw ServiceError(.validationFailed, "ownership goes to a member of the group; \(req.uid) is not one")
            }
            try await store.transfer(g.id, from: actor, to: req.uid, on: c)
            return try await store.changed(g.id, actor: actor, on: c)
        }
        return g
    }

    /// Adds the acceptor of a group invitation (idempotent: a member already is one).
    func add(_ req: GroupMethods.AddMember.Request) async throws -> Group {
        let g: Group = try await store.outbox.transaction { c in
            guard let g = try await store.lock(req.groupId, on: c) else { throw Self.notFound(req.groupId) }
            if g.memberIds.contains(req.uid) { return g }
            guard g.memberCount < g.maxMembers else {
                throw ServiceError(.groupMemberLimit, "group \(g.name) already has \(g.maxMembers) members")
            }
            guard try await accounts.user(id: req.uid, on: c) != nil else { throw ServiceError(.notFound, "no user \(req.uid)") }
            try await store.insertMember(req.uid, of: g.id, invitedBy: req.invitedBy, on: c)
            return try await store.changed(g.id, actor: req.uid, on: c)
        }
        return g
    }
}
