import AccountsService
import Foundation
import GatewayService
import Messaging
import ServiceKit
import Support
import Synchronization
@testable import SuiteSupport
import Testing

/// Paths carry secrets — a calendar feed's token (`/cal/<token>.ics`), an invitation's code
/// (`/v1/invitations/<code>`) — so what the gateway records of a request (spans, the operations
/// page's recent errors) names the route's template instead.
@Suite("No secrets in traces")
struct TraceSecretTests {
    @Test("spans and the operations page's recent errors name the route template (/cal/{file}, /v1/invitations/{code}), never the secret in the path")
    func routeTemplateNotPath() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("spans-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let opsToken = "ops-\(UUID().uuidString)"
        try await withTestSuite(label: "secrets", start: { s in
            try s.start("accounts", migrations: AccountsService.migrations, build: AccountsService.build)
            // Neither alarms nor invitations runs: the feed and the invitation time out upstream,
            // server-side failures the operations page keeps.
            try s.startGateway(extra: ["CHRONIR_TRACE_FILE": file, "CHRONIR_TRACE_SAMPLE": "1", "CHRONIR_UPSTREAM_TIMEOUT": "300ms",
                                       "CHRONIR_OPS_TOKEN": opsToken])
        }) { s in
            // The first sign-up may outlast the 300 ms upstream deadline while accounts warms up
            // (its signing key is made and sealed on first use): try until accounts answers.
            let signedUp = Mutex<TestUser?>(nil)
            _ = await eventually(timeout: .seconds(15)) {
                if let u = try? await s.signup("Secretive", verified: false) { signedUp.withLock { $0 = u } }
                return signedUp.withLock { $0 } != nil
            }
            let u = try #require(signedUp.withLock { $0 }, "accounts never answered a sign-up within 300 ms")
            let feedToken = "feedsecret\(UInt64.random(in: 0...UInt64.max))"
            let code = "invitesecret\(UInt64.random(in: 0...UInt64.max))"
            let feed = try await s.request(.GET, "/cal/\(feedToken).ics")
            #expect(feed.status >= 500, "\(feed.status) \(feed.text)")
            let invitation = try await s.request(.GET, "/v1/invitations/\(code)", token: u.token)
            #expect(invitation.status >= 500, "\(invitation.status) \(invitation.text)")
            let nowhere = try await s.request(.GET, "/nowhere/\(feedToken)")
            #expect(nowhere.status == 404)

            // The spans (flushed every 250 ms): the server spans name the templates.
            var text = ""
            var routes: [String] = []
            let recorded = await eventually(timeout: .seconds(5), every: .milliseconds(100)) {
                text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
                routes = text.split(separator: "\n").compactMap { line in
                    (try? JSONCoding.decode(FinishedSpan.self, from: Data(line.utf8)))?.attributes["http.route"]
                }
                return routes.contains("/cal/{file}") && routes.contains("/v1/invitations/{code}") && routes.contains("NotFound")
            }
            #expect(recorded, "routes recorded: \(routes)")
            #expect(!text.contains(feedToken), "a span holds the feed token")
            #expect(!text.contains(code), "a span holds the invitation code")
            #expect(!text.contains("url.path"))

            // The operations page's recent errors.
            let ops = try await s.request(.GET, "/v1/ops/status", token: opsToken)
            #expect(ops.status == 200, "\(ops.status) \(ops.text)")
            let paths = (ops.json["errors"]?.arrayValue ?? []).compactMap { $0["path"]?.stringValue }
            #expect(paths.contains("/cal/{file}"), "\(paths)")
            #expect(paths.contains("/v1/invitations/{code}"), "\(paths)")
            #expect(!ops.text.contains(feedToken), "the operations page shows the feed token")
            #expect(!ops.text.contains(code), "the operations page shows the invitation code")
            // Each running service's build version (issue 39); nothing is blocked here.
            let accounts = (ops.json["services"]?.arrayValue ?? []).first { $0["service"]?.stringValue == "accounts" }
            #expect(accounts?["version"]?.stringValue?.isEmpty == false, "\(ops.text)")
            #expect(accounts?["blocked"]?.arrayValue == nil, "\(ops.text)")
        }
    }
}
