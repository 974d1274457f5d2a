import Foundation
import Wire

/// A group of people sharing alarms (`chronir-api.md` §3.5), owned by the accounts service.
public struct Group: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var description: String?
    public var ownerId: String
    public var memberIds: [String]
    public var memberCount: Int
    public var maxMembers: Int
    public var iconName: String
    public var createdAt: Date
    public var updatedAt: Date
    /// The group's rules (US-10.2, US-10.3); always present in what accounts answers.
    public var settings: GroupSettings?

    public init(id: String, name: String, description: String?, ownerId: String, memberIds: [String], memberCount: Int, maxMembers: Int,
                iconName: String, createdAt: Date, updatedAt: Date, settings: GroupSettings? = nil) {
        self.settings = settings
        self.id = id
        self.name = name
        self.description = description
        self.ownerId = ownerId
        self.memberIds = memberIds
        self.memberCount = memberCount
        self.maxMembers = maxMembers
        self.iconName = iconName
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A group's rules: who creates and edits its alarms (US-10.2) and how long a fired occurrence
/// stays pending before it counts as missed (US-10.3).
public struct GroupSettings: Codable, Sendable, Equatable {
    /// `owner`, `admins` (the owner and admins: the default) or `everyone`.
    public var alarmEditors: String
    /// Minutes from an occurrence's fire until it is missed (15–10 080); nil: the service's window (2 h).
    public var pendingWindowMinutes: Int?

    public static let editors = ["owner", "admins", "everyone"]
    public static let windowRange = 15...10_080

    public init(alarmEditors: String = "admins", pendingWindowMinutes: Int? = nil) {
        self.alarmEditors = alarmEditors
        self.pendingWindowMinutes = pendingWindowMinutes
    }

    /// Whether a member with `role` creates and edits the group's alarms.
    public func mayEditAlarms(_ role: GroupRole) -> Bool {
        switch alarmEditors {
        case "everyone": true
        case "owner": role == .owner
        default: role.manages
        }
    }
}

/// A member's role in a group (`chronir-api.md` §5): one owner, admins, members.
public enum GroupRole: String, Codable, Sendable, CaseIterable {
    case owner, admin, member

    /// Owners and admins edit the group, its alarms, add alarms to it and invite.
    public var manages: Bool { self == .owner || self == .admin }
}

/// A member of a group and their role.
public struct GroupMember: Codable, Sendable, Equatable {
    public var uid: String
    public var displayName: String
    public var email: String
    public var photoURL: String?
    public var role: GroupRole
    public var joinedAt: Date
    public var invitedBy: String?
    /// Whether the member is told when someone completes one of the group's alarms (US-10.3;
    /// they set it themselves).
    public var completionPushes: Bool?

    public init(uid: String, displayName: String, email: String, photoURL: String?, role: GroupRole, joinedAt: Date, invitedBy: String?,
                completionPushes: Bool? = nil) {
        self.completionPushes = completionPushes
        self.uid = uid
        self.displayName = displayName
        self.email = email
        self.photoURL = photoURL
        self.role = role
        self.joinedAt = joinedAt
        self.invitedBy = invitedBy
    }
}

/// Requests about groups (answered by accounts).
public enum GroupMethods {
    public struct Create: RPCMethod {
        public struct Request: Codable, Sendable {
            public var name: String
            public var description: String?
            public var iconName: String?
            public init(name: String, description: String?, iconName: String?) {
                self.name = name
                self.description = description
                self.iconName = iconName
            }
        }
        public typealias Response = Group
        public static let type = "accounts.groups.create"
    }

    public struct List: RPCMethod {
        public typealias Request = Empty
        public struct Response: Codable, Sendable {
            public var groups: [Group]
            public init(groups: [Group]) { self.groups = groups }
        }
        public static let type = "accounts.groups.list"
    }

    public struct Ref: Codable, Sendable {
        public var groupId: String
        public init(groupId: String) { self.groupId = groupId }
    }

    public struct Get: RPCMethod {
        public typealias Request = Ref
        public typealias Response = Group
        public static let type = "accounts.groups.get"
    }

    /// `PATCH /v1/groups/{id}`: `name`, `description` (null clears), `iconName`.
    public struct Update: RPCMethod {
        public struct Request: Codable, Sendable {
            public var groupId: String
            public var name: String?
            public var description: Patch<String>
            public var iconName: String?
            /// ``GroupSettings/alarmEditors``.
            public var alarmEditors: String?
            /// ``GroupSettings/pendingWindowMinutes`` (null: back to the service's window).
            public var pendingWindowMinutes: Patch<Int> = .unchanged
            public init(groupId: String, name: String?, description: Patch<String>, iconName: String?, alarmEditors: String? = nil,
                        pendingWindowMinutes: Patch<Int> = .unchanged) {
                self.groupId = groupId
                self.name = name
                self.description = description
                self.iconName = iconName
                self.alarmEditors = alarmEditors
                self.pendingWindowMinutes = pendingWindowMinutes
            }
            public init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: AnyCodingKey.self)
                try c.rejectUnknown(allowed: ["groupId", "name", "description", "iconName", "alarmEditors", "pendingWindowMinutes"],
                                    readOnly: ["ownerId": "transfer ownership with POST /v1/groups/{id}/transfer",
                                               "memberIds": "members join by invitation", "memberCount": "computed", "maxMembers": "fixed"])
                groupId = try c.decode(String.self, forKey: AnyCodingKey("groupId"))
                name = try c.decodeIfPresent(String.self, forKey: AnyCodingKey("name"))
                description = try c.patch(String.self, "description")
                iconName = try c.decodeIfPresent(String.self, forKey: AnyCodingKey("iconName"))
                alarmEditors = try c.decodeIfPresent(String.self, forKey: AnyCodingKey("alarmEditors"))
                pendingWindowMinutes = try c.patch(Int.self, "pendingWindowMinutes")
            }
            public func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: AnyCodingKey.self)
                try c.encode(groupId, forKey: AnyCodingKey("groupId"))
                try c.encodeIfPresent(name, forKey: AnyCodingKey("name"))
                try c.encode(description, "description")
                try c.encodeIfPresent(iconName, forKey: AnyCodingKey("iconName"))
                try c.encodeIfPresent(alarmEditors, forKey: AnyCodingKey("alarmEditors"))
                try c.encode(pendingWindowMinutes, "pendingWindowMinutes")
            }
        }
        public typealias Response = Group
        public static let type = "accounts.groups.update"
    }

    public struct Delete: RPCMethod {
        public typealias Request = Ref
        public typealias Response = Empty
        public static let type = "accounts.groups.delete"
    }

    public struct Members: RPCMethod {
        public typealias Request = Ref
        public struct Response: Codable, Sendable {
            public var members: [GroupMember]
            public init(members: [GroupMember]) { self.members = members }
        }
        public static let type = "accounts.groups.members"
    }

    /// `PATCH /v1/groups/{id}/members/{uid}` `{role, completionPushes}`: the owner promotes or
    /// demotes; a member turns their own completion pushes off or on.
    public struct SetRole: RPCMethod {
        public struct Request: Codable, Sendable {
            public var groupId: String
            public var uid: String
            public var role: String?
            public var completionPushes: Bool?
            public init(groupId: String, uid: String, role: String?, completionPushes: Bool? = nil) {
                self.groupId = groupId
                self.uid = uid
                self.role = role
                self.completionPushes = completionPushes
            }
        }
        public typealias Response = GroupMember
        public static let type = "accounts.groups.set-role"
    }

    public struct MemberRef: Codable, Sendable {
        public var groupId: String
        public var uid: String
        public init(groupId: String, uid: String) {
            self.groupId = groupId
            self.uid = uid
        }
    }

    /// `DELETE /v1/groups/{id}/members/{uid}`: removal by the owner or an admin, or leaving.
    public struct RemoveMember: RPCMethod {
        public typealias Request = MemberRef
        public typealias Response = Empty
        public static let type = "accounts.groups.remove-member"
    }

    /// `POST /v1/groups/{id}/transfer {uid}`: the owner hands the group to a member.
    public struct Transfer: RPCMethod {
        public typealias Request = MemberRef
        public typealias Response = Group
        public static let type = "accounts.groups.transfer"
    }

    /// Internal (invitations): adds the acceptor of a group invitation; idempotent per user.
    /// `CA003` when the group is full.
    public struct AddMember: RPCMethod {
        public struct Request: Codable, Sendable {
            public var groupId: String
            public var uid: String
            public var invitedBy: String
            public init(groupId: String, uid: String, invitedBy: String) {
                self.groupId = groupId
                self.uid = uid
                self.invitedBy = invitedBy
            }
        }
        public typealias Response = Group
        public static let type = "accounts.groups.add-member"
        /// Only invitations adds members this way (the gateway's routes never do).
        public static let access = MethodAccess.principals(["invitations"])
    }

    /// Internal (invitations): whether `uid` may invite to the group (owner or admin) and its name.
    public struct Membership: RPCMethod {
        public typealias Request = MemberRef
        public struct Response: Codable, Sendable {
            public var group: Group
            public var role: GroupRole?
            public init(group: Group, role: GroupRole?) {
                self.group = group
                self.role = role
            }
        }
        public static let type = "accounts.groups.membership"
        /// Invitations (who may invite) and alarms (group alarm access) ask it.
        public static let access = MethodAccess.edge(and: "invitations", "alarms")
    }
}

extension AccountsEvents {
    /// A group was created or changed (name, members, roles): the whole state, and who left.
    public static let groupUpserted = TypedEvent<GroupUpserted>("accounts.group-upserted")
    /// A group was deleted.
    public static let groupDeleted = TypedEvent<GroupDeleted>("accounts.group-deleted")

    public struct MemberRole: Codable, Sendable, Equatable {
        public var uid: String
        public var role: GroupRole
        /// The member's name (what texts about the group say).
        public var displayName: String?
        /// ``GroupMember/completionPushes``.
        public var completionPushes: Bool?
        public init(uid: String, role: GroupRole, displayName: String? = nil, completionPushes: Bool? = nil) {
            self.uid = uid
            self.role = role
            self.displayName = displayName
            self.completionPushes = completionPushes
        }
    }

    /// Payload of ``groupUpserted``.
    public struct GroupUpserted: Codable, Sendable {
        public var group: Group
        public var members: [MemberRole]
        /// Members who left or were removed with this change.
        public var removed: [String]
        public init(group: Group, members: [MemberRole], removed: [String]) {
            self.group = group
            self.members = members
            self.removed = removed
        }
    }

    /// Payload of ``groupDeleted``.
    public struct GroupDeleted: Codable, Sendable {
        public var groupId: String
        public var memberIds: [String]
        public init(groupId: String, memberIds: [String]) {
            self.groupId = groupId
            self.memberIds = memberIds
        }
    }
}

extension AccountsMethods {
    /// Internal: sets a user's tier on the profile (billing's entitlement changes; operators).
    public struct SetTier: RPCMethod {
        public struct Request: Codable, Sendable {
            public var userId: String
            public var tier: Tier
            public init(userId: String, tier: Tier) {
                self.userId = userId
                self.tier = tier
            }
        }
        public typealias Response = User
        public static let type = "accounts.admin.set-tier"
        public static let access = MethodAccess.operatorOnly
    }
}

extension AccountsEvents: EventCatalogue {
    public static let stream = "accounts"
    public static let all: [any EventType] = [userUpserted, userDeleted, deviceUpserted, deviceRemoved, sessionRevoked, groupUpserted, groupDeleted]
}
