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
/// is the database's.
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
}
