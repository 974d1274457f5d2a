import AccountsService
import Foundation
import Support
@testable import SuiteSupport
import Testing

/// Issue 74: every service's operations port (metrics, probes) closes a connection that sends
/// nothing, or half a request, after `CHRONIR_OPS_IDLE_TIMEOUT`; before, it was held for ever.
@Suite("Operations port: idle connections closed")
struct OpsPortIdleTests {
    @Test("a connection to a service's ops port that sends half a request line is closed after the idle timeout (1 s here); a whole request is answered")
    func halfRequestClosed() async throws {
        let opsPort = freePort()
        try await withTestSuite(label: "opsidle", start: { s in
            try s.start("accounts", migrations: AccountsService.migrations,
                        extra: ["CHRONIR_OPS_PORT": "\(opsPort)", "CHRONIR_OPS_HOST": "127.0.0.1", "CHRONIR_OPS_IDLE_TIMEOUT": "1s"],
                        build: AccountsService.build)
        }) { _ in
            var whole: RawConnection?
            #expect(await eventually(timeout: .seconds(10)) { (try? RawConnection(port: opsPort)).map { whole = $0; return true } ?? false })
            let answered = try #require(whole)
            defer { answered.close() }
            #expect(answered.send("GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
            let (text, _) = await answered.collect(for: .seconds(1))
            #expect(text.hasPrefix("HTTP/1.1 200"), "\(text.prefix(200))")

            let half = try RawConnection(port: opsPort)
            defer { half.close() }
            let started = ContinuousClock.now
            #expect(half.send("GET /metr"))
            let closed = await half.waitForClose(timeout: .seconds(5))
            #expect(closed, "a half-sent request held the ops port's connection")
            #expect(started.duration(to: .now) < .seconds(4), "closed after \(started.duration(to: .now))")
        }
    }
}
