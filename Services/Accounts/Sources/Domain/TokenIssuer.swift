import Crypto
import Foundation
import JWTKit
import Messaging
import Persistence
import PostgresNIO

/// The claims of an access token.
public struct AccessClaims: JWTPayload, Equatable {
    /// The user id.
    public var sub: SubjectClaim
    /// The session (refresh-token family) the token belongs to.
    public var sid: String
    public var email: String
    /// Whether the account proved `email` (mail answered, or asserted by Apple/Google).
    public var email_verified: Bool?
    public var exp: ExpirationClaim
    public var iat: IssuedAtClaim
    public var iss: IssuerClaim
    public var aud: AudienceClaim

    public func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// Signs access tokens (EdDSA / Ed25519 JWTs). The signing key lives in the accounts schema,
/// created at first start; its public half is served by `accounts.keys` so the gateway
/// verifies tokens locally with no shared secret.
final class TokenIssuer: Sendable {
    static let issuer = "chronir-accounts"
    static let audience = "chronir"

    let kid: String
    let publicKey: EdDSA.PublicKey
    let accessTTL: Duration
    private let keys: JWTKeyCollection

    private init(kid: String, privateKey: EdDSA.PrivateKey, accessTTL: Duration) async {
        self.kid = kid
        self.publicKey = privateKey.publicKey
        self.accessTTL = accessTTL
        self.keys = JWTKeyCollection()
        await keys.add(eddsa: privateKey, kid: JWKIdentifier(string: kid))
    }

    /// Loads the active key, creating one when there is none (concurrent starts agree on one).
    static func load(database: Database, accessTTL: Duration) async throws -> TokenIssuer {
        let candidate = Curve25519.Signing.PrivateKey()
        let kid = "k-\(UUID().uuidString.prefix(8).lowercased())"
        let encoded = candidate.rawRepresentation.base64EncodedString()
        let store = SigningKeyStore(database: database)
        try await store.insertIfNoneActive(kid: kid, privateKey: encoded)
        if let (kid, secret) = try await store.activeKey(), let raw = Data(base64Encoded: secret) {
            let key = EdDSA.PrivateKey(backing: try Curve25519.Signing.PrivateKey(rawRepresentation: raw))
            return await TokenIssuer(kid: kid, privateKey: key, accessTTL: accessTTL)
        }
        throw ServiceError(.internalError, "no usable signing key in accounts.signing_keys")
    }

    /// A signed access token for `user` in `session`.
    func accessToken(userID: String, email: String, emailVerified: Bool = false, session: String, now: Date = Date()) async throws -> String {
        let claims = AccessClaims(
            sub: .init(value: userID), sid: session, email: email, email_verified: emailVerified,
            exp: .init(value: now.addingTimeInterval(Double(accessTTL.components.seconds))),
            iat: .init(value: now), iss: .init(value: Self.issuer), aud: .init(value: [Self.audience])
        )
        return try await keys.sign(claims, kid: JWKIdentifier(string: kid))
    }

    /// The public key, base64url (JWK `x`).
    var publicX: String {
        publicKey.rawRepresentation.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
