import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// An answer of the API: status and JSON body (nil for a transport error).
struct LoadResponse: Sendable {
    var status: Int?
    var body: Data

    var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
    var ok: Bool { (status ?? 0) / 100 == 2 }
}

/// Sends API requests for a load run, records each one's latency and status, waits out 429s
/// (`Retry-After`) and tags a sample of requests with a sampled W3C `traceparent`.
struct LoadHTTP: Sendable {
    /// A device's requests go through the client of its token.
    let clients: HTTPClients
    /// The gateways (`--url`); a device keeps to one, and moves on when it fails.
    let gateways: Gateways
    let recorder: LoadRecorder
    let traceSample: Double
    let maxRetries = 20

    /// Sends `body` (already JSON) as `operation` (a label such as `POST /v1/alarms`).
    /// `retryTransport`: a request that is safe to repeat (idempotent, such as a completion of a
    /// given occurrence) is sent again, up to twice, after a transport error; the error still
    /// counts in the report. With several gateways, the repeat goes to another one.
    /// `retryRefused` (set-up requests): a 503 or 504 — the suite shedding load, or a service
    /// that did not answer in time — and a transport error are sent again after a backoff (0.5,
    /// 1, 2, 4, 8 s), counted as ``LoadRecorder/refused(_:)`` rather than as failures; the answer
    /// after the last try counts as it is. The request may then be applied twice (a sign-up
    /// answered 409, a second alarm): callers handle it, and the audit judges by what the suite
    /// holds.
    func send(_ operation: String, _ method: HTTPMethod, _ path: String, token: String? = nil, body: Data? = nil,
              retryTransport: Bool = false, retryRefused: Bool = false) async -> LoadResponse {
        var attempt = 0
        var transportAttempt = 0
        var refusedAttempt = 0
        func backOff() async -> Bool {
            guard retryRefused, refusedAttempt < Self.refusedBackoff.count else { return false }
            recorder.refused(operation)
            try? await Task.sleep(for: Self.refusedBackoff[refusedAttempt])
            refusedAttempt += 1
            return true
        }
        while true {
            let base = gateways.base(for: token ?? path)
            var request = HTTPClientRequest(url: base + path)
            request.method = method
            if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(data: body))
            }
            var traceId: String?
            if traceSample > 0, Double.random(in: 0..<1) < traceSample {
                let id = Self.hex(16)
                traceId = id
                request.headers.add(name: "traceparent", value: "00-\(id)-\(Self.hex(8))-01")
            }
            let started = ContinuousClock.now
            let sentAt = Date()
            do {
                let response = try await clients.client(for: token ?? path).execute(request, timeout: .seconds(60))
                let collected = try await response.body.collect(upTo: 4 << 20)
                let seconds = Self.seconds(started.duration(to: .now))
                let status = Int(response.status.code)
                gateways.answered(base)
                if status == 429, attempt < maxRetries {
                    recorder.rateLimited(operation)
                    attempt += 1
                    let after = response.headers.first(name: "Retry-After").flatMap(Double.init) ?? 1
                    try? await Task.sleep(for: .seconds(min(max(after, 0.2), 60)))
                    continue
                }
                if status == 503 || status == 504, await backOff() { continue }
                recorder.http(operation, status: status, seconds: seconds)
                if let traceId { recorder.sampled(.init(operation: operation, traceId: traceId, status: status, sentAtUnixMs: sentAt.timeIntervalSince1970 * 1000, seconds: seconds)) }
                return LoadResponse(status: status, body: Data(buffer: collected))
            } catch {
                gateways.failed(base)
                if await backOff() { continue }
                recorder.http(operation, status: nil, seconds: Self.seconds(started.duration(to: .now)), error: String(reflecting: error))
                if retryTransport, transportAttempt < 2 {
                    transportAttempt += 1
                    recorder.transportRetried(operation)
                    try? await Task.sleep(for: .milliseconds(100))
                    continue
                }
                return LoadResponse(status: nil, body: Data("\(error)".utf8))
            }
        }
    }

    /// `send` with a JSON object body.
    func send(_ operation: String, _ method: HTTPMethod, _ path: String, token: String? = nil, json: [String: Any],
              retryTransport: Bool = false, retryRefused: Bool = false) async -> LoadResponse {
        let body = try? JSONSerialization.data(withJSONObject: json)
        return await send(operation, method, path, token: token, body: body, retryTransport: retryTransport, retryRefused: retryRefused)
    }

    /// The pauses before each repeat of a refused set-up request (about 15 s in all).
    static let refusedBackoff: [Duration] = [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8)]

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func hex(_ bytes: Int) -> String {
        var rng = SystemRandomNumberGenerator()
        var s = ""
        for _ in 0..<bytes { s += String(format: "%02x", rng.next() as UInt8) }
        return s.allSatisfy { $0 == "0" } ? String(s.dropLast()) + "1" : s
    }
}
