import Foundation
import Support
@testable import SuiteSupport
import Testing

extension DenialOfServiceTests {
    @Test("one account holds at most N live streams: the next is 429 CA019 with Retry-After; other accounts are not affected; a closed stream frees its place")
    func liveStreamCap() async throws {
        // Pings every 200 ms: a stream whose client left is noticed (and its place freed) at the next one.
        try await withSuite(["CHRONIR_LIVE_STREAMS_PER_ACCOUNT": "3", "CHRONIR_SSE_PING": "200ms"]) { s in
            let u = try await s.signup("Hoarder", verified: false)
            let url = try await s.gatewayURL() + "/v1/me/events"
            var streams: [SSEClient] = []
            for _ in 0..<3 {
                let stream = SSEClient(http: s.http, url: url, token: u.token)
                streams.append(stream)
                #expect(await eventually { stream.connected.withLock { $0 } })
            }
            let over = try await s.request(.GET, "/v1/me/events", token: u.token)
            #expect(over.status == 429, "\(over.status) \(over.text)")
            #expect(over.code == "CA019")
            #expect((Int(over.header("Retry-After") ?? "") ?? 0) >= 1, "Retry-After: \(over.header("Retry-After") ?? "none")")

            let other = try await s.signup("Neighbour", verified: false)
            let theirs = SSEClient(http: s.http, url: url, token: other.token)
            #expect(await eventually { theirs.connected.withLock { $0 } })

            // One stream closes: a new one is let in once the gateway has noticed.
            await streams.removeFirst().close()
            var reopened: SSEClient?
            let deadline = ContinuousClock.now + .seconds(10)
            while reopened == nil, ContinuousClock.now < deadline {
                let attempt = SSEClient(http: s.http, url: url, token: u.token)
                if await eventually(timeout: .seconds(1), { attempt.connected.withLock { $0 } }) {
                    reopened = attempt
                } else {
                    await attempt.close()
                }
            }
            #expect(reopened != nil, "no stream was let in after one closed")
            for stream in streams + [theirs] + (reopened.map { [$0] } ?? []) { await stream.close() }
        }
    }
}
