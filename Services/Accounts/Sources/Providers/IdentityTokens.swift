import Crypto
import Foundation
import JWTKit
import Logging
import Messaging

/// A provider identity proven by a verified ID token.
struct ProviderIdentity: Sendable, Equatable {
    /// `iss` and `sub`: one account per pair.
    var issuer: String
    var subject: String
    var email: String?
    var emailVerified: Bool
}

/// The claims read from an Apple or Google ID token. Each check is made by
/// ``IdentityTokens/verify(_:provider:nonce:)`` so a refusal can name the one that failed.
struct IdentityClaims: JWTPayload {
    var iss: IssuerClaim
    var sub: SubjectClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim
    var email: String?
    var email_verified: FlexibleBool?
    var nonce: String?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Apple sends booleans as strings (`"true"`), Google as booleans.
struct FlexibleBool: Codable, Sendable {
    var value: Bool
    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let b = try? c.decode(Bool.self) { value = b } else { value = (try c.decode(String.self)).lowercased() == "true" }
    }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(value)
    }
}

/// Verifies Apple and Google ID tokens: the signature against the provider's JWKS, then
/// `iss`, `aud`, `exp` and `iat` (with `skew`), and Apple's nonce (the SHA-256 of the raw nonce).
struct IdentityTokens: Sendable {
    struct Provider: Sendable {
        var name: String
        var issuers: [String]
        var audiences: [String]
        var keys: ProviderKeys
    }

    let providers: [String: Provider]
    let skew: TimeInterval
    let logger: Logger

    /// Why a token was refused (logged; the answer only says it was).
    enum Check: String {
        case malformed, signature, issuer, audience, expired, issuedInFuture = "issued-in-the-future", nonce, keysUnavailable = "keys-unavailable"
    }

    static let refused = ServiceError(.invalidCredentials, "the identity token was refused")

    func verify(_ token: String, provider name: String, nonce: String?) async throws -> ProviderIdentity {
        guard let provider = providers[name] else {
            throw ServiceError(.validationFailed, "provider must be one of \(providers.keys.sorted().joined(separator: ", "))")
        }
        guard !provider.audiences.isEmpty else {
            throw ServiceError(.notFound, "sign in with \(name) is not enabled on this server")
        }
        func refuse(_ check: Check, _ detail: String = "") -> ServiceError {
            logger.notice("identity token refused", metadata: ["provider": "\(name)", "check": "\(check.rawValue)", "detail": "\(detail)"])
            return Self.refused
        }
        let kid = Self.keyID(of: token)
        let claims: IdentityClaims
        do {
            let keys = try await provider.keys.collection(for: kid)
            claims = try await keys.verify(token, as: IdentityClaims.self)
        } catch let error as ProviderKeysUnavailable {
            // Not the token's fault: the caller may try again once the keys can be fetched.
            _ = refuse(.keysUnavailable, error.description)
            throw ServiceError(.serviceUnavailable, "\(name)'s signing keys cannot be fetched right now; try again shortly")
        } catch let error as JWTError {
            throw refuse(error.errorType == .malformedToken ? .malformed : .signature, "\(error.errorType) kid=\(kid ?? "-")")
        } catch {
            throw refuse(.malformed, "\(error)")
        }
        guard provider.issuers.contains(claims.iss.value) else { throw refuse(.issuer, claims.iss.value) }
        guard claims.aud.value.contains(where: provider.audiences.contains) else { throw refuse(.audience, "\(claims.aud.value)") }
        let now = Date()
        guard claims.exp.value.addingTimeInterval(skew) > now else { throw refuse(.expired, "\(claims.exp.value)") }
        guard claims.iat.value.addingTimeInterval(-skew) <= now else { throw refuse(.issuedInFuture, "\(claims.iat.value)") }
        // Apple puts the SHA-256 of the app's raw nonce in the token. Google puts the nonce as
        // sent. Either way, when the client gives one or the token carries one, they must match:
        // a token made for a nonce (the web app's) cannot be replayed without it (issue 74).
        if name == "apple", nonce != nil || claims.nonce != nil {
            let expected = nonce.map { Hex.lowercase(SHA256.hash(data: Data($0.utf8))) }
            guard let expected, claims.nonce == expected else { throw refuse(.nonce) }
        }
        if name == "google", nonce != nil || claims.nonce != nil, claims.nonce != nonce { throw refuse(.nonce) }
        return ProviderIdentity(issuer: claims.iss.value, subject: claims.sub.value, email: claims.email,
                                emailVerified: claims.email_verified?.value ?? false)
    }

    /// The `kid` of a JWT's header, if it has one.
    static func keyID(of token: String) -> String? {
        guard let head = token.split(separator: ".", omittingEmptySubsequences: false).first else { return nil }
        var b64 = head.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        guard let data = Data(base64Encoded: b64),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return object["kid"] as? String
    }
}
