import Foundation
import Support
@testable import SuiteSupport
import Testing

extension DenialOfServiceTests {
    @Test("a request head that never completes (slowloris), even one trickling a header line at a time, is closed at the idle timeout; a live stream outlives it")
    func slowHeaderIsClosed() async throws {
        try await withSuite(["CHRONIR_HTTP_IDLE_TIMEOUT": "1s", "CHRONIR_SSE_PING": "300ms"]) { s in
            let port = try await gatewayPort(s)

            // Half a head, then silence.
            let stalled = try RawConnection(port: port)
            defer { stalled.close() }
            let opened = ContinuousClock.now
            #expect(stalled.send("GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\n"))
            #expect(await stalled.waitForClose(timeout: .seconds(5)), "the server kept a stalled head open for 5 s")
            #expect(opened.duration(to: .now) < .seconds(4), "closed only after \(opened.duration(to: .now))")

            // A header line every 300 ms: bytes of an unfinished head do not count as activity.
            let trickle = try RawConnection(port: port)
            defer { trickle.close() }
            let started = ContinuousClock.now
            #expect(trickle.send("GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\n"))
            var closed = false
            var line = 0
            while !closed, started.duration(to: .now) < .seconds(5) {
                line += 1
                closed = !trickle.send("X-Slow-\(line): still coming\r\n")
                if !closed { closed = await trickle.waitForClose(timeout: .milliseconds(300)) }
            }
            #expect(closed, "a trickling head kept the connection open for 5 s")
            #expect(started.duration(to: .now) < .seconds(4), "closed only after \(started.duration(to: .now)) (\(line) lines)")

            // A live stream sends for longer than the idle timeout without being cut.
            let u = try await s.signup("Patient", verified: false)
            let live = try RawConnection(port: port)
            defer { live.close() }
            #expect(live.send("GET /v1/me/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(u.token)\r\nAccept: text/event-stream\r\n\r\n"))
            let (text, ended) = await live.collect(for: .milliseconds(2_500))
            #expect(!ended, "the live stream was closed: \(text)")
            #expect(text.hasPrefix("HTTP/1.1 200"), "\(text)")
            #expect(text.contains(": ping"), "\(text)")
        }
    }
}
