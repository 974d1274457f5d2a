import Foundation
import PostgresNIO
import SchedulerService
import Support
@testable import SuiteSupport
import Testing

/// A scheduler whose host clock is off (issue 58): it fires by the database's clock
/// (``SchedulerClock``), not its own. The skew is the failpoint `CHRONIR_FAILPOINT_CLOCK_BEHIND`,
/// which makes this scheduler read its host's wall clock 4 s behind, as a host whose NTP
/// stopped would; the services run in this process, so the test's own clock is the database's.
@Suite("Scheduler clock skew")
struct ClockSkewTests {
    @Test("a scheduler whose host clock is 4 s behind fires on time by the database's clock and records the fire at that time")
    func firesByTheDatabaseClock() async throws {
        try await withTestSuite(label: "clock-skew", start: { s in
            try s.startCore()
            try s.start("scheduler", migrations: SchedulerService.migrations,
                        extra: ["CHRONIR_SCHEDULER_PARTITIONS": "16", "CHRONIR_FIRE_LEAD": "0s", "CHRONIR_FAILPOINT_CLOCK_BEHIND": "4s"],
                        build: SchedulerService.build)
        }) { s in
            let u = try await s.signup("Skewed")
            let r = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "On time", "schedule": scheduleJSON("annual", day: 1)])
            let id = try #require(r.json["id"]?.stringValue, "\(r.text)")
            let due = try await s.dueIn(id, seconds: 3)
            var seen: Date?
            let deadline = Date().addingTimeInterval(15)
            while seen == nil, Date() < deadline {
                if try await s.firedAt(id) != nil { seen = Date() } else { try await Task.sleep(for: .milliseconds(25)) }
            }
            let firstSeen = try #require(seen, "no fire within 15 s")
            let late = firstSeen.timeIntervalSince(due)
            #expect(late < 1.5, "fired \(late) s after its instant (by the database's clock)")
            #expect(late > -0.05, "fired \(-late) s early")
            let recorded = try #require(try await s.firedAt(id))
            #expect(abs(recorded.timeIntervalSince(firstSeen)) < 1.0, "recorded fired_at \(recorded), seen \(firstSeen)")
        }
    }
}
