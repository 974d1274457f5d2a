import Crypto
import CryptoExtras
import Foundation
import Hummingbird
import JWTKit
import Messaging
import Support
import Synchronization

/// Apple and Google as far as sign-in needs them: a local HTTP server publishing each one's
/// JWKS (RSA keys made here), and ID tokens signed with those keys. Keys can be rotated, and
/// the number of JWKS fetches is counted.
final class IdentityProviderServer: Sendable {
    struct SigningKey: Sendable {
        let kid: String
        let key: JWTKit.Insecure.RSA.PrivateKey
    }

    /// The current key of each provider (`apple`, `google`).
    private let current = Mutex<[String: SigningKey]>([:])
    private let server = LocalHTTPServer()
    let fetches = Mutex<[String: Int]>([:])

    init() throws {
        for p in ["apple", "google"] { try rotate(p) }
    }

    var baseURL: String { server.baseURL }

    /// What the accounts service needs to trust this server.
    func environment(appleAudience: String = "app.chronir.ios", googleAudience: String = "chronir-web.apps.googleusercontent.com") -> [String: String] {
        ["CHRONIR_APPLE_JWKS_URL": "\(baseURL)/apple/keys", "CHRONIR_GOOGLE_JWKS_URL": "\(baseURL)/google/keys",
         "CHRONIR_APPLE_AUDIENCES": appleAudience, "CHRONIR_GOOGLE_AUDIENCES": googleAudience]
    }

    /// A new key for `provider`; the JWKS publishes only it from now on.
    func rotate(_ provider: String) throws {
        let key = try Self.newKey()
        current.withLock { $0[provider] = SigningKey(kid: "\(provider)-\(UUID().uuidString.prefix(8))", key: key) }
    }

    /// A fresh RSA-2048 key.
    static func newKey() throws -> JWTKit.Insecure.RSA.PrivateKey {
        try JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
    }

    func key(_ provider: String) -> SigningKey { current.withLock { $0[provider]! } }

    func start() async throws {
        let router = Router()
        router.get("/:provider/keys") { _, context in
            let provider = try context.parameters.require("provider")
            self.fetches.withLock { $0[provider, default: 0] += 1 }
            let k = self.key(provider)
            let (n, e) = try k.key.publicKey.getKeyPrimitives()
            let jwk: [String: String] = ["kty": "RSA", "alg": "RS256", "use": "sig", "kid": k.kid,
                                         "n": n.base64URLEncodedString(), "e": e.base64URLEncodedString()]
            let body = try JSONSerialization.data(withJSONObject: ["keys": [jwk]])
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        try await server.start(router, name: "identity provider server")
    }

    func stop() { server.stop() }

    struct Claims: JWTPayload {
        var iss: IssuerClaim
        var sub: SubjectClaim
        var aud: AudienceClaim
        var exp: ExpirationClaim
        var iat: IssuedAtClaim
        var email: String?
        var email_verified: String?
        var nonce: String?
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// An ID token of `provider`, signed with `key` (default: the published one).
    func token(_ provider: String, sub: String, email: String?, verified: Bool = true, audience: String? = nil, issuer: String? = nil,
               expires: Date = Date().addingTimeInterval(600), issued: Date = Date(), nonce: String? = nil,
               key: SigningKey? = nil) async throws -> String {
        let k = key ?? self.key(provider)
        let claims = Claims(
            iss: IssuerClaim(value: issuer ?? (provider == "apple" ? "https://appleid.apple.com" : "https://accounts.google.com")),
            sub: SubjectClaim(value: sub),
            aud: AudienceClaim(value: [audience ?? (provider == "apple" ? "app.chronir.ios" : "chronir-web.apps.googleusercontent.com")]),
            exp: ExpirationClaim(value: expires), iat: IssuedAtClaim(value: issued),
            email: email, email_verified: email == nil ? nil : (verified ? "true" : "false"),
            // Apple carries the SHA-256 of the app's nonce, Google the nonce as sent.
            nonce: provider == "apple" ? nonce.map { SHA256.hash(data: Data($0.utf8)).map { String(format: "%02x", $0) }.joined() } : nonce)
        let keys = JWTKeyCollection()
        await keys.add(rsa: k.key, digestAlgorithm: .sha256, kid: JWKIdentifier(string: k.kid))
        return try await keys.sign(claims, kid: JWKIdentifier(string: k.kid))
    }
}

