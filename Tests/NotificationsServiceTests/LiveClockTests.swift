import Foundation
import SchedulerService
import Support
@testable import SuiteSupport
import Testing

/// The live stream rings by the database's clock (issue 75): a fire announced ahead waits in
/// the gateway until its instant, which the scheduler set by the database's clock. The gateway
/// reads that clock through `notifications.head` (``LiveClock``); it used to wait by its own
/// wall clock and rang early when that clock was ahead. The skew is the failpoint
/// `CHRONIR_FAILPOINT_CLOCK_AHEAD`; the services run in this process, so the test's own clock
/// is the database's. The inbox likewise: notifications cut a page before the first waiting
/// row by its host's clock, and a host 2 s ahead let 25 fires out early in the 20-minute soak
/// (a resumed stream is caught up from the inbox); the database's clock cuts it now.
@Suite("Live stream clock")
struct LiveClockTests {
    @Test("a gateway whose host clock is 4 s ahead lets a fire announced ahead out at its instant, not 4 s before")
    func gatewayClockAhead() async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        try await withTestSuite(label: "live-clock", start: { s in
            try s.startCore(gatewayExtra: ["CHRONIR_FAILPOINT_CLOCK_AHEAD": "4s"])
            try s.start("scheduler", migrations: SchedulerService.migrations,
                        extra: ["CHRONIR_SCHEDULER_PARTITIONS": "16"], build: SchedulerService.build)
            try s.startNotifications(push)
        }) { s in
            let u = try await s.signup("Ahead")
            let live = SSEClient(http: s.http, url: try await s.gatewayURL() + "/v1/me/events", token: u.token)
            defer { Task { await live.close() } }
            #expect(await eventually { live.connected.withLock { $0 } })
            let created = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "On time", "schedule": scheduleJSON("annual", day: 1)])
            let id = try #require(created.json["id"]?.stringValue, "\(created.text)")
            let due = try await s.dueIn(id, seconds: 7)
            #expect(await eventually(timeout: .seconds(20)) { live.ids.count == 1 }, "the fire never reached the live stream")
            let arrived = try #require(live.events.withLock { $0.first?.receivedAt })
            #expect(arrived >= due, "rang \(due.timeIntervalSince(arrived)) s before its instant")
            #expect(arrived < due.addingTimeInterval(2), "rang \(arrived.timeIntervalSince(due)) s after its instant")
        }
    }

    @Test("a notifications service whose host clock is 30 s ahead keeps a fire announced ahead out of the inbox and of a resumed stream until its instant")
    func notificationsClockAhead() async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        try await withTestSuite(label: "inbox-clock", start: { s in
            try s.startCore()
            try s.start("scheduler", migrations: SchedulerService.migrations,
                        extra: ["CHRONIR_SCHEDULER_PARTITIONS": "16"], build: SchedulerService.build)
            try s.startNotifications(push, extra: ["CHRONIR_FAILPOINT_CLOCK_AHEAD": "30s"])
        }) { s in
            let u = try await s.signup("InboxAhead")
            let created = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "Not yet", "schedule": scheduleJSON("annual", day: 1)])
            let id = try #require(created.json["id"]?.stringValue, "\(created.text)")
            let due = try await s.dueIn(id, seconds: 8)
            #expect(await eventually(timeout: .seconds(5)) { await s.inboxCount(u, type: "alarm_fired") == 1 },
                    "the fire did not reach notifications ahead of its instant")
            // A resumed stream (the soak's clients) is caught up from the inbox, as is a page read.
            let resumed = SSEClient(http: s.http, url: try await s.gatewayURL() + "/v1/me/events", token: u.token, lastEventId: "0")
            defer { Task { await resumed.close() } }
            #expect(await eventually { resumed.connected.withLock { $0 } })
            let page = try await s.request(.GET, "/v1/me/notifications", token: u.token)
            let fired = { (e: SSEClient.Event) in e.data.contains("alarm_fired") }
            try await Task.sleep(for: .seconds(1))
            #expect(Date() < due.addingTimeInterval(-3), "too slow to look before the instant")
            #expect(page.json["notifications"]?.arrayValue?.count == 0, "the inbox showed a fire before its instant: \(page.text)")
            #expect(resumed.events.withLock { $0.filter(fired) }.isEmpty, "a resumed stream was sent a fire before its instant")

            #expect(await eventually(timeout: .seconds(20)) { resumed.events.withLock { $0.contains(where: fired) } },
                    "the fire never reached the resumed stream")
            let arrived = try #require(resumed.events.withLock { $0.first(where: fired)?.receivedAt })
            #expect(arrived >= due, "rang \(due.timeIntervalSince(arrived)) s before its instant")
            let after = try await s.request(.GET, "/v1/me/notifications", token: u.token)
            #expect(after.json["notifications"]?.arrayValue?.count == 1, "\(after.text)")
        }
    }
}
