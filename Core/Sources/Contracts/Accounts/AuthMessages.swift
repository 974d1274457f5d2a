import Foundation

/// `POST /v1/auth/signup`.
public struct SignupRequest: Codable, Sendable {
    public var email: String
    public var password: String
    public var displayName: String
    /// IANA zone for the profile's settings (default UTC).
    public var timezone: String?
    public var platform: String?

    public init(email: String, password: String, displayName: String, timezone: String? = nil, platform: String? = nil) {
        self.email = email
        self.password = password
        self.displayName = displayName
        self.timezone = timezone
        self.platform = platform
    }
}

/// `POST /v1/auth/login`.
public struct LoginRequest: Codable, Sendable {
    public var email: String
    public var password: String

    public init(email: String, password: String) {
        self.email = email
        self.password = password
    }
}

/// `POST /v1/auth/refresh`.
public struct RefreshRequest: Codable, Sendable {
    public var refreshToken: String

    public init(refreshToken: String) {
        self.refreshToken = refreshToken
    }
}

/// `POST /v1/auth/logout`: ends the session of the access token, or of `refreshToken`.
public struct LogoutRequest: Codable, Sendable {
    public var refreshToken: String?

    public init(refreshToken: String? = nil) {
        self.refreshToken = refreshToken
    }
}

/// What sign-up, login and refresh return.
public struct AuthResult: Codable, Sendable {
    public var user: User
    /// A JWT (EdDSA) valid for `expiresIn` seconds.
    public var accessToken: String
    /// An opaque token, valid once: refreshing returns a new one.
    public var refreshToken: String
    public var expiresIn: Int
    public var tokenType: String

    public init(user: User, accessToken: String, refreshToken: String, expiresIn: Int) {
        self.user = user
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.tokenType = "Bearer"
    }
}

/// The public keys that verify access tokens.
public struct SigningKeys: Codable, Sendable {
    public struct Key: Codable, Sendable {
        /// Key id (the JWT `kid`).
        public var kid: String
        /// Ed25519 public key, base64url (the JWK `x`).
        public var x: String

        public init(kid: String, x: String) {
            self.kid = kid
            self.x = x
        }
    }

    public var keys: [Key]
    public var issuer: String
    public var audience: String

    public init(keys: [Key], issuer: String, audience: String) {
        self.keys = keys
        self.issuer = issuer
        self.audience = audience
    }
}

/// Sessions revoked recently, and the position in the accounts stream they reflect.
public struct RevokedSessions: Codable, Sendable {
    /// The accounts stream head when the list was read; later revocations arrive as events.
    public var head: Int64
    /// Session ids (the access token's `sid`) whose tokens must be refused.
    public var sessions: [String]

    public init(head: Int64, sessions: [String]) {
        self.head = head
        self.sessions = sessions
    }
}

/// Header names the gateway adds to requests it forwards.
public enum AuthHeaders {
    /// The session id (`sid` claim) of the caller's access token.
    public static let session = "session"
    /// The caller's email (`email` claim), for invitation matching.
    public static let email = "email"
    /// `"1"` when the caller proved the address in ``email`` (`email_verified` claim: a
    /// verification mail answered, or an Apple/Google identity that asserted it); absent otherwise.
    /// Invitations bound to an address are answered only by a caller who proved it.
    public static let emailVerified = "email-verified"
}

/// Sign in with Apple or Google: the provider's ID token, verified against its published keys.
public struct ProviderSignInRequest: Codable, Sendable {
    /// `apple` or `google`.
    public var provider: String
    /// The ID token (a JWT signed by the provider).
    public var identityToken: String
    /// Apple: the raw nonce the app generated; the token carries its SHA-256.
    public var nonce: String?
    /// Apple gives the name only to the app, at the first sign-in.
    public var displayName: String?

    public init(provider: String, identityToken: String, nonce: String? = nil, displayName: String? = nil) {
        self.provider = provider
        self.identityToken = identityToken
        self.nonce = nonce
        self.displayName = displayName
    }
}

/// An account with no credentials yet (the app's first run), upgraded later by ``LinkRequest``.
public struct AnonymousSignupRequest: Codable, Sendable {
    public var displayName: String?
    public var timezone: String?
    public init(displayName: String? = nil, timezone: String? = nil) {
        self.displayName = displayName
        self.timezone = timezone
    }
}

/// Attaches credentials to the caller's account, keeping its uid and data: an email and
/// password, or an Apple or Google identity.
public struct LinkRequest: Codable, Sendable {
    public var email: String?
    public var password: String?
    /// `apple` or `google`, with `identityToken` (and Apple's `nonce`).
    public var provider: String?
    public var identityToken: String?
    public var nonce: String?
    public init(email: String? = nil, password: String? = nil, provider: String? = nil, identityToken: String? = nil, nonce: String? = nil) {
        self.email = email
        self.password = password
        self.provider = provider
        self.identityToken = identityToken
        self.nonce = nonce
    }
}

/// Asks for a password-reset mail (answered the same whether or not the address has an account).
public struct PasswordResetRequest: Codable, Sendable {
    public var email: String
    public init(email: String) { self.email = email }
}

/// Sets a new password with the token of a reset mail; every session ends.
public struct PasswordResetConfirmation: Codable, Sendable {
    public var token: String
    public var password: String
    public init(token: String, password: String) {
        self.token = token
        self.password = password
    }
}

/// Confirms an email address with the token of a verification mail.
public struct EmailVerificationConfirmation: Codable, Sendable {
    public var token: String
    public init(token: String) { self.token = token }
}
