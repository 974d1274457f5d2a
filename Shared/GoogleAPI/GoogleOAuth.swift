import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore
import NIOFoundationCompat
import Synchronization

/// A Google service account (the JSON file Google issues) and the OAuth 2.0 access tokens it
/// earns with a signed JWT assertion (RFC 7523, `urn:ietf:params:oauth:grant-type:jwt-bearer`).
/// Shared by FCM and the Play Developer API.
public final class GoogleOAuth: Sendable {
    /// The service-account JSON file's fields that matter here.
    public struct ServiceAccount: Codable, Sendable {
        public var project_id: String?
        public var client_email: String
        public var private_key: String
        public var token_uri: String
    }

    struct Assertion: JWTPayload {
        var iss: IssuerClaim
        var scope: String
        var aud: AudienceClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    public struct TokenError: Error, CustomStringConvertible {
        public var description: String
    }

    public let account: ServiceAccount
    public let scope: String
    private let client: HTTPClient
    private let keys: JWTKeyCollection
    private let cached = Mutex<(token: String, expires: Date)?>(nil)

    public init(account: ServiceAccount, scope: String, client: HTTPClient) async throws {
        self.account = account
        self.scope = scope
        self.client = client
        keys = JWTKeyCollection()
        await keys.add(rsa: try Insecure.RSA.PrivateKey(pem: account.private_key), digestAlgorithm: .sha256)
    }

    /// A valid access token, fetched again a minute before the current one expires.
    public func accessToken(now: Date = Date()) async throws -> String {
        if let c = cached.withLock({ $0 }), c.expires.timeIntervalSince(now) > 60 { return c.token }
        let assertion = try await keys.sign(Assertion(
            iss: .init(value: account.client_email), scope: scope, aud: .init(value: account.token_uri),
            iat: .init(value: now), exp: .init(value: now.addingTimeInterval(3600))))
        var request = HTTPClientRequest(url: account.token_uri)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"))
        let response = try await BoundedFetch.fetch(client, request, within: .seconds(15), maxBytes: 64 * 1024)
        let data = Data(buffer: response.body)
        guard response.status == 200,
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let token = json["access_token"] as? String else {
            throw TokenError(description: "token endpoint answered \(response.status): \(String(decoding: data.prefix(300), as: UTF8.self))")
        }
        let lifetime = (json["expires_in"] as? Double) ?? (json["expires_in"] as? Int).map(Double.init) ?? 3600
        cached.withLock { $0 = (token, now.addingTimeInterval(lifetime)) }
        return token
    }

    /// Forgets the token (after the API refused it).
    public func invalidate() { cached.withLock { $0 = nil } }
}
