import AsyncHTTPClient
import Foundation
import NotificationsCore
import JWTKit
import Logging
import NIOCore
import Synchronization

/// Apple Push Notification service over HTTP/2 with token (ES256 JWT) authentication:
/// `POST /3/device/<token>` with `authorization: bearer <jwt>`, `apns-topic`, `apns-push-type`,
/// `apns-priority` (10 for fires, 5 for the rest) and the payload of Appendix C; a silent change
/// goes as a background push (`content-available`, `apns-push-type: background`).
final class APNsProvider: PushProvider {
    struct Configuration: Sendable {
        /// `https://api.push.apple.com` (or the sandbox, or a local server speaking the protocol).
        var baseURL: String
        /// The app's bundle id.
        var topic: String
        var teamId: String
        var keyId: String
        /// The `.p8` signing key (PEM).
        var privateKeyPEM: String
    }

    struct Claims: JWTPayload {
        var iss: IssuerClaim
        var iat: IssuedAtClaim
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    let configuration: Configuration
    let client: HTTPClient
    private let keys: JWTKeyCollection
    private let cached = Mutex<(token: String, issued: Date)?>(nil)

    init(configuration: Configuration, client: HTTPClient) async throws {
        self.configuration = configuration
        self.client = client
        keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PrivateKey(pem: configuration.privateKeyPEM), kid: JWKIdentifier(string: configuration.keyId))
    }

    /// The provider token, reused for 40 minutes (Apple refuses one older than an hour and
    /// throttles ones renewed more often than every 20 minutes).
    func providerToken(now: Date = Date()) async throws -> String {
        if let c = cached.withLock({ $0 }), now.timeIntervalSince(c.issued) < 2400 { return c.token }
        let token = try await keys.sign(Claims(iss: .init(value: configuration.teamId), iat: .init(value: now)),
                                        kid: JWKIdentifier(string: configuration.keyId))
        cached.withLock { $0 = (token, now) }
        return token
    }

    /// The JSON body of Appendix C for APNs.
    static func payload(_ content: PushContent) throws -> Data {
        if content.silent == true {
            // A background push: no alert, no sound; the app wakes and reads the delta feed.
            var body: [String: Any] = ["aps": ["content-available": 1]]
            for (k, v) in content.data where k != "aps" { body[k] = v }
            return try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
        }
        var aps: [String: Any] = [
            "alert": ["title": content.title, "body": content.body],
            "sound": content.urgent ? "default_alarm.caf" : "default",
            "interruption-level": content.urgent ? "time-sensitive" : "active",
        ]
        if let key = content.collapseKey { aps["thread-id"] = key }
        var body: [String: Any] = ["aps": aps]
        for (k, v) in content.data where k != "aps" { body[k] = v }
        return try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
    }

    func send(_ content: PushContent, to target: PushTarget) async -> PushResult {
        guard let token = target.token else { return PushResult(status: 0, outcome: .unregistered, reason: "no device token") }
        do {
            var request = HTTPClientRequest(url: "\(configuration.baseURL)/3/device/\(token)")
            request.method = .POST
            request.headers.add(name: "authorization", value: "bearer \(try await providerToken())")
            request.headers.add(name: "apns-topic", value: configuration.topic)
            // Apple requires priority 5 for background pushes.
            request.headers.add(name: "apns-push-type", value: content.silent == true ? "background" : "alert")
            request.headers.add(name: "apns-priority", value: content.urgent && content.silent != true ? "10" : "5")
            request.headers.add(name: "apns-expiration", value: "0")
            request.headers.add(name: "apns-id", value: Self.apnsID(target))
            if let key = content.collapseKey { request.headers.add(name: "apns-collapse-id", value: key) }
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: try Self.payload(content)))
            return await ProviderHTTP.execute(client, request, timeout: .seconds(15), reason: { _, data in
                (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["reason"] as? String
            }, classify: Self.classify)
        } catch {
            return PushResult(status: 0, outcome: .failed, reason: "cannot build the request: \(error)")
        }
    }

    /// APNs specifics: 410 and 400 `BadDeviceToken` mean the token is dead; 403 (bad provider
    /// token) is a configuration error, retried because a renewed token may fix it.
    static func classify(status: Int, reason: String?, retryAfter: TimeInterval?) -> PushResult {
        if status == 400, reason == "BadDeviceToken" || reason == "DeviceTokenNotForTopic" {
            return PushResult(status: status, outcome: .unregistered, reason: reason)
        }
        if status == 403, reason == "ExpiredProviderToken" {
            return PushResult(status: status, outcome: .retry, reason: reason)
        }
        return PushResult.classify(status: status, reason: reason, retryAfter: retryAfter)
    }

    /// A stable `apns-id` per delivery (lower-case UUID form, as Apple expects).
    static func apnsID(_ target: PushTarget) -> String {
        var hex = String(UInt64(bitPattern: target.deliveryId), radix: 16)
        hex = String(repeating: "0", count: max(0, 12 - hex.count)) + hex
        return "00000000-0000-4000-8000-\(hex.suffix(12))"
    }
}

extension PushResult {
    init(status: Int, outcome: Outcome, reason: String?) {
        self.init(status: status, outcome: outcome, reason: reason, retryAfter: nil)
    }
}
