import AsyncHTTPClient
import Crypto
import NotificationsCore
import Contracts
import Foundation
import Messaging
import NIOCore

/// Pushes to an HTTPS endpoint of the user's choosing (self-hosted clients, integrations):
/// `POST <url>` with the notification as JSON and
/// `X-Chronir-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
/// Receivers recompute the HMAC and refuse old timestamps. A 410 removes the endpoint.
///
/// The URL is the user's, so it must not reach inside the deployment: unless
/// `CHRONIR_WEBHOOK_ALLOW_PRIVATE` is set, a URL ``WebhookAddress/registrationProblem(_:)``
/// refuses, or whose host is or resolves to an internal address, fails for good without a
/// connection, and the request goes only to an address that was checked (``WebhookClients``).
/// Redirects are not followed (a 3xx fails), and the reason recorded for an error keeps the
/// status and at most ``reasonBodyBytes`` of the body, without control characters. A send
/// holds a slot of the webhook lane (``SendLanes``, apart from APNs and FCM) until its
/// ``deadline`` at the latest.
struct WebhookProvider: PushProvider {
    let secret: SymmetricKey
    let clients: WebhookClients
    /// Plain `http://` endpoints are refused unless allowed (local development, tests).
    let allowHTTP: Bool
    /// The most a send may take, from the request to the last byte read
    /// (`CHRONIR_WEBHOOK_DEADLINE`): a receiver that trickles its head or body is cut off then.
    /// Shorter than a claimed delivery's lease (60 s), so no send is still open when another
    /// worker may claim the row again.
    var deadline: Duration = .seconds(10)

    /// How much of an error body a reason keeps (it is logged, stored and exported).
    static let reasonBodyBytes = 64
    static func signature(secret: SymmetricKey, timestamp: Int, body: Data) -> String {
        var message = Data("\(timestamp).".utf8)
        message.append(body)
        return "t=\(timestamp),v1=" + Hex.lowercase(HMAC<SHA256>.authenticationCode(for: message, using: secret))
    }

    /// The JSON a webhook receives: keys in alphabetical order, `deepLink` null when absent.
    struct Body: Encodable {
        var content: PushContent
        var target: PushTarget

        enum Keys: String, CodingKey { case body, data, deepLink, deviceId, eventId, id, title, type, urgent, userId }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(content.body, forKey: .body)
            var data = c.nestedContainer(keyedBy: AnyCodingKey.self, forKey: .data)
            for (k, v) in content.data.sorted(by: { $0.key < $1.key }) { try data.encode(v, forKey: AnyCodingKey(k)) }
            if let link = content.deepLink { try c.encode(link, forKey: .deepLink) } else { try c.encodeNil(forKey: .deepLink) }
            try c.encode(target.deviceId, forKey: .deviceId)
            try c.encode(target.eventId, forKey: .eventId)
            try c.encode("\(target.eventId):\(target.deviceId)", forKey: .id)
            try c.encode(content.title, forKey: .title)
            try c.encode(content.type, forKey: .type)
            try c.encode(content.urgent, forKey: .urgent)
            try c.encode(target.userId, forKey: .userId)
        }
    }

    static func body(_ content: PushContent, target: PushTarget) throws -> Data {
        try JSONCoding.encode(Body(content: content, target: target))
    }

    func send(_ content: PushContent, to target: PushTarget) async -> PushResult {
        guard let url = target.webhookUrl, let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased() else {
            return PushResult(status: 0, outcome: .unregistered, reason: "no webhook URL")
        }
        guard scheme == "https" || (scheme == "http" && allowHTTP) else {
            return PushResult(status: 0, outcome: .failed, reason: "webhook URL must be https")
        }
        guard let host = WebhookClients.host(of: parsed) else {
            return PushResult(status: 0, outcome: .failed, reason: "webhook URL has no host")
        }
        if !clients.allowPrivate, let problem = WebhookAddress.registrationProblem(url) {
            return PushResult(status: 0, outcome: .failed, reason: problem)
        }
        let route = await clients.route(host: host)
        switch route {
        case .refused(let why):
            return PushResult(status: 0, outcome: .failed, reason: why)
        case .unresolved(let why):
            return PushResult(status: 0, outcome: .retry, reason: why)
        case .direct, .pinned:
            break
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
        let prepared = request
        let deadline = deadline
        return await clients.withClient(route, host: host) { client in
            await Self.execute(client, prepared, deadline: deadline)
        } ?? PushResult(status: 0, outcome: .retry, reason: "the webhook clients are shut down")
    }

    /// Sends `request` and classifies the answer: 2xx sent, 410 unregistered, 429 and 5xx
    /// retried, anything else (a redirect too) failed. The whole send — connect, head and the
    /// little of an error body a reason keeps — ends by `deadline` (an absolute bound, not an
    /// idle timeout a trickle of bytes keeps resetting): past it the request is cancelled, its
    /// connection closed, and the delivery retried. A 2xx body is never read.
    static func execute(_ client: HTTPClient, _ request: HTTPClientRequest, deadline: Duration) async -> PushResult {
        var result = await ProviderHTTP.bounded(deadline) { await attempt(client, request, deadline: deadline) }
        if result.status == 0, result.reason?.hasPrefix("no answer within") == true {
            result.reason = "the webhook did not answer within \(deadline)"
        }
        return result
    }

    private static func attempt(_ client: HTTPClient, _ request: HTTPClientRequest, deadline: Duration) async -> PushResult {
        do {
            let response = try await client.execute(request, timeout: .seconds(deadline.components.seconds))
            let status = Int(response.status.code)
            guard status >= 300 else {
                // Delivered: the body is not read (dropping it closes the connection rather than
                // wait for it).
                return PushResult.classify(status: status, reason: nil, retryAfter: nil)
            }
            // The status decides; the reason's few bytes get a second at most.
            let head = await Self.head(of: response.body, upTo: reasonBodyBytes, within: .seconds(1))
            return PushResult.classify(status: status, reason: Self.reason(status: status, body: head),
                                       retryAfter: ProviderHTTP.retryAfter(response.headers))
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            return PushResult(status: 0, outcome: .retry, reason: "the webhook did not answer within \(deadline)")
        } catch {
            return .transport(error)
        }
    }

    /// The first `limit` bytes (or a little more: whole chunks) of a response body, or none when
    /// they do not come `within` the time given (a trickled body); the rest is not read.
    static func head(of body: HTTPClientResponse.Body, upTo limit: Int, within: Duration) async -> [UInt8] {
        await withTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                var out: [UInt8] = []
                do {
                    for try await chunk in body {
                        out.append(contentsOf: chunk.readableBytesView)
                        if out.count >= limit { break }
                    }
                } catch {
                    // What arrived before the error is enough for a reason.
                }
                return out
            }
            group.addTask {
                try? await Task.sleep(for: within)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? []
        }
    }

    /// `HTTP <status>`, with at most ``reasonBodyBytes`` of the body with control and format
    /// characters removed; a redirect says it was not followed.
    static func reason(status: Int, body: [UInt8]) -> String {
        let text = String(decoding: body.prefix(reasonBodyBytes), as: UTF8.self)
        var kept = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator: continue
            default: kept.append(scalar)
            }
        }
        let clean = String(kept).trimmingCharacters(in: .whitespaces)
        let label = (300..<400).contains(status) ? "HTTP \(status) (redirects are not followed)" : "HTTP \(status)"
        return clean.isEmpty ? label : "\(label): \(clean)"
    }
}
