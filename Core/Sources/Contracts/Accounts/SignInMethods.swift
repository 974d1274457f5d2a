import Foundation
import Wire

/// The ways into an account and the sessions signed in to it: the actor lists and unlinks its
/// Apple and Google identities, lists its sessions and ends one or all of them.
extension AccountsMethods {
    /// The Apple and Google identities linked to the actor's account.
    public struct ListIdentities: RPCMethod {
        public typealias Request = Empty
        public struct Response: Codable, Sendable, Equatable {
            public var identities: [LinkedIdentity]
            public init(identities: [LinkedIdentity]) { self.identities = identities }
        }
        public static let type = "accounts.identities.list"
    }

    /// Unlinks the actor's identities of one provider. Refused when it would leave the account
    /// with no way to sign in (no password and no other identity).
    public struct UnlinkIdentity: RPCMethod {
        public struct Request: Codable, Sendable {
            /// `apple` or `google`.
            public var provider: String
            public init(provider: String) { self.provider = provider }
        }
        public typealias Response = Empty
        public static let type = "accounts.identities.unlink"
    }

    /// The actor's active sessions, newest first; `current` marks the one asking.
    public struct ListSessions: RPCMethod {
        public typealias Request = Empty
        public struct Response: Codable, Sendable, Equatable {
            public var sessions: [SessionSummary]
            public init(sessions: [SessionSummary]) { self.sessions = sessions }
        }
        public static let type = "accounts.sessions.list"
    }

    /// Ends one of the actor's sessions (its refresh token stops working; its access tokens are
    /// refused by every gateway once the revocation reaches it).
    public struct EndSession: RPCMethod {
        public struct Request: Codable, Sendable {
            public var sessionId: String
            public init(sessionId: String) { self.sessionId = sessionId }
        }
        public typealias Response = Empty
        public static let type = "accounts.sessions.end"
    }

    /// "Sign out everywhere": ends every active session of the actor, the asking one included.
    public struct EndAllSessions: RPCMethod {
        public typealias Request = Empty
        public struct Response: Codable, Sendable, Equatable {
            /// How many sessions were ended.
            public var ended: Int
            public init(ended: Int) { self.ended = ended }
        }
        public static let type = "accounts.sessions.end-all"
    }
}

/// An Apple or Google identity linked to an account.
public struct LinkedIdentity: Codable, Sendable, Equatable {
    /// `apple` or `google`.
    public var provider: String
    /// The address the provider gave when it was linked (Apple may give a relay address or none).
    public var email: String?
    public var linkedAt: Date
    public init(provider: String, email: String?, linkedAt: Date) {
        self.provider = provider
        self.email = email
        self.linkedAt = linkedAt
    }
}

/// A signed-in session of an account.
public struct SessionSummary: Codable, Sendable, Equatable {
    public var id: String
    /// When it signed in.
    public var createdAt: Date
    /// When it last renewed its tokens (its latest refresh token); nil when it never did.
    public var lastActiveAt: Date?
    /// Whether this is the session of the request that listed it.
    public var current: Bool
    public init(id: String, createdAt: Date, lastActiveAt: Date?, current: Bool) {
        self.id = id
        self.createdAt = createdAt
        self.lastActiveAt = lastActiveAt
        self.current = current
    }
}
