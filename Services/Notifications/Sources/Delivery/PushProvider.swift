import AsyncHTTPClient
import Foundation
import NotificationsCore
import NIOCore
import NIOHTTP1

/// Where one push goes.
struct PushTarget: Sendable {
    var deliveryId: Int64
    var eventId: String
    var userId: String
    var deviceId: String
    var provider: String
    var token: String?
    var webhookUrl: String?
}

/// What a provider answered, classified for the retry policy (`chronir-api.md` §12.3).
struct PushResult: Sendable, Equatable {
    enum Outcome: String, Sendable {
        /// Accepted by the provider.
        case sent
        /// Throttled, unavailable or unreachable: try again later.
        case retry
        /// Refused for good (bad request, bad credentials): logged, not retried.
        case failed
        /// The token or endpoint is gone: remove it.
        case unregistered
    }
    var status: Int
    var outcome: Outcome
    var reason: String?
    /// The provider's `Retry-After`, if it gave one.
    var retryAfter: TimeInterval?

    static func transport(_ error: any Error) -> PushResult {
        PushResult(status: 0, outcome: .retry, reason: "\(error)", retryAfter: nil)
    }

    /// The usual reading of an HTTP status: 2xx sent, 429/5xx retry, other 4xx failed.
    static func classify(status: Int, reason: String?, retryAfter: TimeInterval?) -> PushResult {
        switch status {
        case 200..<300: PushResult(status: status, outcome: .sent, reason: nil, retryAfter: nil)
        case 429, 500..<600: PushResult(status: status, outcome: .retry, reason: reason, retryAfter: retryAfter)
        case 410: PushResult(status: status, outcome: .unregistered, reason: reason, retryAfter: nil)
        default: PushResult(status: status, outcome: .failed, reason: reason, retryAfter: nil)
        }
    }
}

/// A push service: APNs, FCM or a webhook.
protocol PushProvider: Sendable {
    /// Sends one push. Never throws: every failure is a ``PushResult``.
    func send(_ content: PushContent, to target: PushTarget) async -> PushResult
}

/// Helpers the HTTP providers share.
enum ProviderHTTP {
    /// Collects a response body (capped: provider error bodies are small).
    static func body(_ response: HTTPClientResponse) async -> Data {
        (try? await response.body.collect(upTo: 64 * 1024)).map { Data(buffer: $0) } ?? Data()
    }

    static func retryAfter(_ headers: HTTPHeaders) -> TimeInterval? {
        headers.first(name: "retry-after").flatMap(TimeInterval.init)
    }

    /// Sends `request` and classifies the answer with `reason`, which reads the error body. The
    /// whole send, head and body, ends within `timeout` (``bounded(_:_:)``).
    static func execute(_ client: HTTPClient, _ request: HTTPClientRequest, timeout: TimeAmount,
                        reason: @escaping @Sendable (Int, Data) -> String?,
                        classify: @escaping @Sendable (Int, String?, TimeInterval?) -> PushResult = PushResult.classify)
        async -> PushResult {
        await bounded(.nanoseconds(timeout.nanoseconds)) {
            do {
                let response = try await client.execute(request, timeout: timeout)
                let status = Int(response.status.code)
                let data = await body(response)
                return classify(status, status < 300 ? nil : reason(status, data), retryAfter(response.headers))
            } catch {
                return .transport(error)
            }
        }
    }

    /// Runs a send, but no longer than `deadline`: an absolute bound on the slot it holds, where
    /// AsyncHTTPClient's own timeouts cover the response head (`execute(timeout:)`) or an idle
    /// read (a byte every few seconds resets it). Past the deadline the send's task is
    /// cancelled — AsyncHTTPClient then cancels the request and closes its connection — and the
    /// answer is a retry.
    static func bounded(_ deadline: Duration, _ send: @escaping @Sendable () async -> PushResult) async -> PushResult {
        await withTaskGroup(of: PushResult?.self) { group in
            group.addTask { await send() }
            group.addTask {
                try? await Task.sleep(for: deadline)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? PushResult(status: 0, outcome: .retry, reason: "no answer within \(deadline)")
        }
    }
}
