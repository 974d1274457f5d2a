import Foundation
import Wire

/// An invitation to share an alarm or join a group (`chronir-api.md` §3.6). The `id` is the
/// invite code (128 random bits, URL-safe) and appears in the deep link.
public struct Invitation: Codable, Sendable, Equatable {
    public var id: String
    /// `alarm` or `group`.
    public var type: String
    public var referenceId: String
    public var referenceName: String
    public var inviterId: String
    public var inviterDisplayName: String
    /// Nil for an open link invitation or one to an account.
    public var inviteeEmail: String?
    /// The account invited (an invitation by account, `inviteeUserId` on create); nil otherwise.
    public var inviteeUserId: String?
    /// `pending`, `accepted`, `declined`, `expired` or `revoked`.
    public var status: String
    public var createdAt: Date
    public var expiresAt: Date
    public var acceptedAt: Date?
    public var acceptedBy: String?
    /// `https://chronir.app/invite/{id}`.
    public var deepLink: String

    public init(id: String, type: String, referenceId: String, referenceName: String, inviterId: String, inviterDisplayName: String,
                inviteeEmail: String?, inviteeUserId: String? = nil, status: String, createdAt: Date, expiresAt: Date, acceptedAt: Date?,
                acceptedBy: String?, deepLink: String) {
        self.id = id
        self.type = type
        self.referenceId = referenceId
        self.referenceName = referenceName
        self.inviterId = inviterId
        self.inviterDisplayName = inviterDisplayName
        self.inviteeEmail = inviteeEmail
        self.inviteeUserId = inviteeUserId
        self.status = status
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.acceptedAt = acceptedAt
        self.acceptedBy = acceptedBy
        self.deepLink = deepLink
    }
}

/// Requests the invitations service answers.
public enum InvitationsMethods {
    public struct Create: RPCMethod {
        public struct Request: Codable, Sendable {
            public var type: String
            public var referenceId: String
            public var inviteeEmail: String?
            /// An account to invite (a group member's id, say) instead of an address.
            public var inviteeUserId: String?
            public init(type: String, referenceId: String, inviteeEmail: String?, inviteeUserId: String? = nil) {
                self.type = type
                self.referenceId = referenceId
                self.inviteeEmail = inviteeEmail
                self.inviteeUserId = inviteeUserId
            }
        }
        public typealias Response = Invitation
        public static let type = "invitations.create"
    }

    public struct List: RPCMethod {
        public struct Request: Codable, Sendable {
            /// `invitee` (pending invitations for me) or `inviter` (what I sent).
            public var role: String
            public init(role: String) { self.role = role }
        }
        public struct Response: Codable, Sendable {
            public var invitations: [Invitation]
            public init(invitations: [Invitation]) { self.invitations = invitations }
        }
        public static let type = "invitations.list"
    }

    public struct Ref: Codable, Sendable {
        public var code: String
        public init(code: String) { self.code = code }
    }

    public struct Get: RPCMethod {
        public typealias Request = Ref
        public typealias Response = Invitation
        public static let type = "invitations.get"
    }

    public struct Accept: RPCMethod {
        public typealias Request = Ref
        public typealias Response = Invitation
        public static let type = "invitations.accept"
    }

    public struct Decline: RPCMethod {
        public typealias Request = Ref
        public typealias Response = Invitation
        public static let type = "invitations.decline"
    }

    public struct Revoke: RPCMethod {
        public typealias Request = Ref
        public typealias Response = Invitation
        public static let type = "invitations.revoke"
    }
}

/// Events of the `invitations` stream.
public enum InvitationsEvents {
    public static let created = TypedEvent<Changed>("invitations.invitation-created")
    public static let accepted = TypedEvent<Changed>("invitations.invitation-accepted")
    public static let declined = TypedEvent<Changed>("invitations.invitation-declined")
    public static let revoked = TypedEvent<Changed>("invitations.invitation-revoked")
    public static let expired = TypedEvent<Changed>("invitations.invitation-expired")

    /// Payload of every invitations event.
    public struct Changed: Codable, Sendable, Equatable {
        public var invitation: Invitation
        /// The registered user the invitee email belongs to (created), or who accepted/declined.
        public var userId: String?
        public var userDisplayName: String?
        /// Why it was revoked (`inviter`, `alarm deleted`, `group deleted`, `inviter deleted`).
        public var reason: String?
        public init(invitation: Invitation, userId: String?, userDisplayName: String?, reason: String?) {
            self.invitation = invitation
            self.userId = userId
            self.userDisplayName = userDisplayName
            self.reason = reason
        }
    }
}

extension InvitationsEvents: EventCatalogue {
    public static let stream = "invitations"
    public static let all: [any EventType] = [created, accepted, declined, revoked, expired]
}
