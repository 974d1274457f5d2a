import Foundation
import NotificationsService
import SchedulerService
import Support
@testable import SuiteSupport
import Testing

/// The live stream's resume race: fires are committed while the client is away and while it
/// reconnects (between the gateway registering the stream, reading the inbox after
/// `Last-Event-ID` and streaming live ids above it). Across every reconnect the client sees each
/// notification of the inbox once, in order.
@Suite("Live stream resume race")
struct LiveResumeRaceTests {
    @Test("40 fires over 4 s while the client reconnects every few hundred milliseconds with Last-Event-ID: every inbox id once, in order")
    func reconnectsDuringFires() async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        try await withTestSuite(label: "resume-race", start: { s in
            try s.startCore()
            try s.start("scheduler", migrations: SchedulerService.migrations,
                        extra: ["CHRONIR_SCHEDULER_PARTITIONS": "16", "CHRONIR_FIRE_LEAD": "0s"], build: SchedulerService.build)
            try s.startNotifications(push)
        }) { s in
            let u = try await s.signup("Racer")
            try await s.setTier(u, "premium")
            let n = 40
            var ids: [String] = []
            for k in 0..<n {
                let r = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "Race \(k)", "schedule": scheduleJSON("annual", day: 1)])
                ids.append(try #require(r.json["id"]?.stringValue, "\(r.text)"))
            }
            for id in ids { try await s.awaitFireTimer(id) }
            // The fires come due one every 100 ms, from 2 s on, announced at their instant (no
            // lead): each inbox row is committed while the client comes and goes.
            try await s.staggerFires(ids, after: 2, every: 0.1)

            var random = SeededRandom.forTest("LiveResumeRaceTests.reconnectsDuringFires")
            let seed = random.seed
            let url = try await s.gatewayURL() + "/v1/me/events"
            var received: [Int64] = []
            var connections = 0
            let deadline = ContinuousClock.now + .seconds(60)
            // The switch to Premium is told on the stream too (`plan_changed`, the first inbox row).
            let total = n + 1
            while received.count < total, ContinuousClock.now < deadline {
                // Every connection resumes, the first after 0 (nothing seen yet): a notification
                // that came while no stream was open is in the inbox, not in anyone's live feed.
                let client = SSEClient(http: s.http, url: url, token: u.token, lastEventId: String(received.last ?? 0))
                connections += 1
                // Stay 50–400 ms, then leave; the next connection starts after 0–200 ms away.
                try await Task.sleep(for: .milliseconds(Int.random(in: 50...400, using: &random)))
                await client.close()
                received += client.ids.compactMap { Int64($0) }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...200, using: &random)))
            }
            let inbox = try await s.inDatabase("notifications") { db in
                try await db.query("SELECT id FROM inbox WHERE user_id = \(u.uid) ORDER BY id").all(Int64.self)
            }
            #expect(inbox.count == total, "inbox: \(inbox.count) of \(total)")
            #expect(received == inbox, "seed \(seed), \(connections) connections: received \(received.count) ids \(received), inbox \(inbox)")
            #expect(connections >= 8, "the client should have reconnected while fires came in (seed \(seed))")
        }
    }
}
