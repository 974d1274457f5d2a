import Foundation
import Wire

/// The requests the accounts service answers.
public enum AccountsMethods {
    public struct Signup: RPCMethod {
        public typealias Request = SignupRequest
        public typealias Response = AuthResult
        public static let type = "accounts.signup"
    }

    public struct Login: RPCMethod {
        public typealias Request = LoginRequest
        public typealias Response = AuthResult
        public static let type = "accounts.login"
    }

    /// An account without credentials (limited to Free until linked).
    public struct Anonymous: RPCMethod {
        public typealias Request = AnonymousSignupRequest
        public typealias Response = AuthResult
        public static let type = "accounts.signup-anonymous"
    }

    /// Attaches an email and password, or an Apple or Google identity, to the actor's account.
    public struct Link: RPCMethod {
        public typealias Request = LinkRequest
        public typealias Response = User
        public static let type = "accounts.link"
    }

    /// Records that the actor's local alarms were imported (`migratedAt`, set once).
    public struct MarkMigrated: RPCMethod {
        public typealias Request = Empty
        public typealias Response = User
        public static let type = "accounts.mark-migrated"
    }

    /// Queues a password-reset mail when the address has an account.
    public struct RequestPasswordReset: RPCMethod {
        public typealias Request = PasswordResetRequest
        public typealias Response = Empty
        public static let type = "accounts.password-reset"
    }

    /// A new password with a reset token; revokes every session.
    public struct ConfirmPasswordReset: RPCMethod {
        public typealias Request = PasswordResetConfirmation
        public typealias Response = Empty
        public static let type = "accounts.password-reset-confirm"
    }

    /// Queues a verification mail to the actor's email.
    public struct RequestVerification: RPCMethod {
        public typealias Request = Empty
        public typealias Response = Empty
        public static let type = "accounts.email-verification"
    }

    /// Confirms an email with a verification token.
    public struct ConfirmVerification: RPCMethod {
        public typealias Request = EmailVerificationConfirmation
        public typealias Response = Empty
        public static let type = "accounts.email-verification-confirm"
    }

    /// Sign in with Apple or Google (an account is created, or linked by verified email, on first use).
    public struct ProviderSignIn: RPCMethod {
        public typealias Request = ProviderSignInRequest
        public typealias Response = AuthResult
        public static let type = "accounts.sign-in-provider"
    }

    public struct Refresh: RPCMethod {
        public typealias Request = RefreshRequest
        public typealias Response = AuthResult
        public static let type = "accounts.refresh"
    }

    public struct Logout: RPCMethod {
        public typealias Request = LogoutRequest
        public typealias Response = Empty
        public static let type = "accounts.logout"
    }

    public struct GetMe: RPCMethod {
        public typealias Request = Empty
        public typealias Response = User
        public static let type = "accounts.me.get"
        /// Invitations reads the inviter's tier and name as the inviter.
        public static let access = MethodAccess.edge(and: "invitations")
    }

    /// The request payload is a JSON object of the fields to change (see `UserPatch`).
    public struct UpdateMe: RPCMethod {
        public typealias Request = UserPatch
        public typealias Response = User
        public static let type = "accounts.me.update"
    }

    public struct DeleteMe: RPCMethod {
        public typealias Request = Empty
        public typealias Response = Empty
        public static let type = "accounts.me.delete"
    }

    public struct PutDevice: RPCMethod {
        public typealias Request = DeviceUpsert
        public typealias Response = Device
        public static let type = "accounts.devices.put"
    }

    public struct ListDevices: RPCMethod {
        public typealias Request = Empty
        public struct Response: Codable, Sendable {
            public var devices: [Device]
            public init(devices: [Device]) { self.devices = devices }
        }
        public static let type = "accounts.devices.list"
    }

    public struct DeleteDevice: RPCMethod {
        public struct Request: Codable, Sendable {
            public var deviceId: String
            public init(deviceId: String) { self.deviceId = deviceId }
        }
        public typealias Response = Empty
        public static let type = "accounts.devices.delete"
    }

    public struct Keys: RPCMethod {
        public typealias Request = Empty
        public typealias Response = SigningKeys
        public static let type = "accounts.keys"
    }

    /// Operator: a new access-token signing key, used at once; the replaced key still verifies
    /// (is published by ``Keys``) until `previousRetiresAt` — the longest access-token lifetime
    /// and a margin — then is retired (`chronirctl keys rotate-jwt`).
    public struct RotateSigningKey: RPCMethod {
        public typealias Request = Empty
        public struct Response: Codable, Sendable, Equatable {
            /// The new key's id (the JWT `kid` of tokens signed from now on).
            public var kid: String
            /// The key replaced (nil when there was none).
            public var previousKid: String?
            /// When the replaced key stops being published.
            public var previousRetiresAt: Date?
            public init(kid: String, previousKid: String?, previousRetiresAt: Date?) {
                self.kid = kid
                self.previousKid = previousKid
                self.previousRetiresAt = previousRetiresAt
            }
        }
        public static let type = "accounts.rotate-signing-key"
        public static let access = MethodAccess.operatorOnly
    }

    public struct Revocations: RPCMethod {
        public typealias Request = Empty
        public typealias Response = RevokedSessions
        public static let type = "accounts.revocations"
    }
}
