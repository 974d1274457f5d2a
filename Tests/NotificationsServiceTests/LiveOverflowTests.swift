import AccountsService
import AlarmsService
import Foundation
import NotificationsService
import SchedulerService
import Support
@testable import SuiteSupport
import Testing

/// A client slower than its notifications (issue 58): the gateway holds a bounded buffer per
/// live stream; what does not fit used to be dropped without a word. Now the writer reads what
/// the buffer refused from the inbox once it has sent what the buffer held.
@Suite("Live stream overflow")
struct LiveOverflowTests {
    @Test("12 fires into a stream whose buffer holds 2 items and whose writer pauses 250 ms per item: every fire arrives once, in order, after a resync")
    func slowClientLosesNothing() async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        try await withTestSuite(label: "live-overflow", start: { s in
            try s.start("accounts", migrations: AccountsService.migrations, build: AccountsService.build)
            try s.start("alarms", migrations: AlarmsService.migrations, extra: ["CHRONIR_ALARM_CREATIONS_PER_MINUTE": "1000"], build: AlarmsService.build)
            // Pings every 100 ms: the buffer also holds pings ahead of the first notification, so
            // the resync must start from the oldest notification it took, not the one it refused.
            try s.startGateway(extra: ["CHRONIR_LIVE_BUFFER": "2", "CHRONIR_FAILPOINT_LIVE_WRITE_DELAY": "250ms", "CHRONIR_SSE_PING": "100ms"])
            try s.start("scheduler", migrations: SchedulerService.migrations,
                        extra: ["CHRONIR_SCHEDULER_PARTITIONS": "16", "CHRONIR_FIRE_LEAD": "0s"], build: SchedulerService.build)
            try s.startNotifications(push)
        }) { s in
            let u = try await s.signup("SlowReader")
            try await s.setTier(u, "premium")
            let n = 12
            var ids: [String] = []
            for k in 0..<n {
                let r = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "Burst \(k)", "schedule": scheduleJSON("annual", day: 1)])
                ids.append(try #require(r.json["id"]?.stringValue, "\(r.text)"))
            }
            for id in ids { try await s.awaitFireTimer(id) }
            // Connected before the fires, without a cursor: only what happens from now on.
            let client = SSEClient(http: s.http, url: try await s.gatewayURL() + "/v1/me/events", token: u.token)
            defer { Task { await client.close() } }
            #expect(await eventually { client.connected.withLock { $0 } })
            // One fire every 60 ms from 1 s on, each its own item; the writer takes 250 ms per item.
            try await s.staggerFires(ids, after: 1, every: 0.06)
            let fired = { () async throws -> [Int64] in
                try await s.inDatabase("notifications") { db in
                    try await db.query("SELECT id FROM inbox WHERE user_id = \(u.uid) AND type = 'alarm_fired' ORDER BY id").all(Int64.self)
                }
            }
            #expect(await eventually(timeout: .seconds(30)) { (try? await fired().count) == n })
            let inbox = try await fired()
            #expect(await eventually(timeout: .seconds(30)) { client.ids.count >= n })
            try await Task.sleep(for: .milliseconds(600))
            let received = client.ids.compactMap { Int64($0) }
            let comments = client.comments.withLock { $0 }
            // The buffer must have overflowed, or this test shows nothing.
            #expect(comments.contains("resync"), "no resync: \(comments)")
            #expect(received == inbox, "received \(received), inbox \(inbox), comments \(comments)")
        }
    }
}
