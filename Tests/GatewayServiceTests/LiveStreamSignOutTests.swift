import Foundation
import Support
@testable import SuiteSupport
import Testing

extension DenialOfServiceTests {
    @Test("a live stream ends when its session is signed out: a stolen token's stream does not outlive the session (before, it kept receiving)")
    func liveStreamEndsAtSignOut() async throws {
        try await withSuite(["CHRONIR_SSE_PING": "300ms"]) { s in
            let port = try await gatewayPort(s)
            let u = try await s.signup("Watched", verified: false)
            let live = try RawConnection(port: port)
            defer { live.close() }
            #expect(live.send("GET /v1/me/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(u.token)\r\nAccept: text/event-stream\r\n\r\n"))
            let (opened, _) = await live.collect(for: .milliseconds(800))
            #expect(opened.hasPrefix("HTTP/1.1 200") && opened.contains(": ping"), "\(opened)")
            let logout = try await s.request(.POST, "/v1/auth/logout", token: u.token, json: [:] as [String: String])
            #expect(logout.status == 204, "\(logout.text)")
            // The answer's last chunk (the body ended), within a few pings.
            let (after, closed) = await live.collect(for: .seconds(3))
            #expect(closed || after.hasSuffix("0\r\n\r\n"), "the live stream outlived its session: \(after.suffix(120))")
        }
    }
}
