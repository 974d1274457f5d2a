import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore

/// Pushes to an HTTPS endpoint of the user's choosing (self-hosted clients, integrations):
/// `POST <url>` with the notification as JSON and
/// `X-Chronir-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
/// Receivers recompute the HMAC and refuse old timestamps. A 410 removes the endpoint.
struct WebhookProvider: PushProvider {
    let secret: SymmetricKey
    let client: HTTPClient
    /// Plain `http://` endpoints are refused unless allowed (local development, tests).
    let allowHTTP: Bool

    static func signature(secret: SymmetricKey, timestamp: Int, body: Data) -> String {
        var message = Data("\(timestamp).".utf8)
        message.append(body)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: secret)
        return "t=\(timestamp),v1=" + mac.map { String(format: "%02x", $0) }.joined()
    }

    static func body(_ content: PushContent, target: PushTarget) throws -> Data {
        let json: [String: Any] = [
            "id": "\(target.eventId):\(target.deviceId)",
            "eventId": target.eventId,
            "userId": target.userId,
            "deviceId": target.deviceId,
            "type": content.type,
            "title": content.title,
            "body": content.body,
            "urgent": content.urgent,
            "deepLink": content.deepLink ?? NSNull(),
            "data": content.data,
        ]
        return try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
    }

    func send(_ content: PushContent, to target: PushTarget) async -> PushResult {
        guard let url = target.webhookUrl, let parsed = URL(string: url), let scheme = parsed.scheme else {
            return PushResult(status: 0, outcome: .unregistered, reason: "no webhook URL")
        }
        guard scheme == "https" || (scheme == "http" && allowHTTP) else {
            return PushResult(status: 0, outcome: .failed, reason: "webhook URL must be https")
        }
        guard let body = try? Self.body(content, target: target) else {
            return PushResult(status: 0, outcome: .failed, reason: "cannot encode the body")
        }
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "user-agent", value: "chronir-notifications")
        request.headers.add(name: "x-chronir-event", value: content.type)
        request.headers.add(name: "x-chronir-delivery", value: "\(target.eventId):\(target.deviceId)")
        request.headers.add(name: "x-chronir-signature",
                            value: Self.signature(secret: secret, timestamp: Int(Date().timeIntervalSince1970), body: body))
        request.body = .bytes(ByteBuffer(data: body))
        return await ProviderHTTP.execute(client, request, timeout: .seconds(10), reason: { status, data in
            "HTTP \(status): " + String(decoding: data.prefix(200), as: UTF8.self)
        })
    }
}
