import Contracts
import Foundation
import Messaging
import SchedulerService
import Support
@testable import SuiteSupport
import Testing

/// Floating time (US-7.3) through the running suite: a floating alarm keeps its wall-clock time
/// in the owner's current zone, re-planned by the scheduler when a device reports another.
@Suite("Floating time")
struct FloatingTimeTests {
    /// The traveller flies from Los Angeles to New York (Manila → New York, over the date line,
    /// is `FloatingTimeRulesTests`: its next 07:00 is a day away, too long to wait for here).
    @Test("travel to New York: the floating alarm fires at its time in New York, once; a fixed one keeps its zone")
    func travelToNewYork() async throws {
        try await withTestSuite(label: "floating", start: { s in
            try s.startCore()
            try s.start("scheduler", migrations: SchedulerService.migrations,
                        extra: ["CHRONIR_SCHEDULER_PUSH_TO": "alarms", "CHRONIR_SCHEDULER_PARTITIONS": "16"], build: SchedulerService.build)
        }) { s in
            let u = try await s.signup("Traveller", timezone: "America/Los_Angeles")
            // A whole minute at least 2 minutes away, as a New York wall-clock time ("07:00" in the
            // story). Once re-planned, its timer is moved to now instead of waited for: what is
            // asserted is which occurrence fires (New York's, once), not the wheel's timing.
            var due = (Date().timeIntervalSince1970 / 60).rounded(.up) * 60
            if due - Date().timeIntervalSince1970 < 120 { due += 60 }
            let dueDate = Date(timeIntervalSince1970: due)
            var newYork = Calendar(identifier: .gregorian)
            newYork.timeZone = TimeZone(identifier: "America/New_York")!
            let parts = newYork.dateComponents([.hour, .minute], from: dueDate)
            let hm = String(format: "%02d:%02d", parts.hour!, parts.minute!)
            var floating = scheduleJSON("custom", day: 1, time: hm, zone: "America/Los_Angeles")
            floating["floating"] = true
            let created = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "Morning pills", "schedule": floating])
            let id = try #require(created.json["id"]?.stringValue, "\(created.text)")
            let westFire = try #require(created.json["nextFireDate"]?.stringValue.flatMap(ISOTime.parse))
            #expect(westFire == dueDate.addingTimeInterval(3 * 3600) && created.json["schedule"]?["floating"] == .bool(true), "\(created.text)")
            let fixed = try await s.request(.POST, "/v1/alarms", token: u.token, json: [
                "title": "Call home", "schedule": scheduleJSON("custom", day: 1, time: hm, zone: "America/Los_Angeles")])
            let fixedId = try #require(fixed.json["id"]?.stringValue, "\(fixed.text)")
            try await s.awaitFireTimer(id)

            // Landed: the phone reports New York.
            let device = try await s.request(.PUT, "/v1/me/devices/phone", token: u.token, json: [
                "platform": "android", "pushToken": "fcm-token-1", "timezone": "America/New_York"])
            #expect(device.status == 200 || device.status == 201, "\(device.text)")
            let moved = await eventually(timeout: .seconds(10)) {
                let a = try? await s.request(.GET, "/v1/alarms/\(id)", token: u.token)
                return a?.json["nextFireDate"]?.stringValue.flatMap(ISOTime.parse) == dueDate
            }
            #expect(moved, "the floating alarm was not re-planned to New York time")
            let after = try await s.request(.GET, "/v1/alarms/\(id)", token: u.token)
            #expect(after.json["schedule"]?["timezone"]?.stringValue == "America/New_York" && after.json["schedule"]?["timeOfDay"]?.stringValue == hm)
            let kept = try await s.request(.GET, "/v1/alarms/\(fixedId)", token: u.token)
            #expect(kept.json["schedule"]?["timezone"]?.stringValue == "America/Los_Angeles" && kept.json["nextFireDate"] == fixed.json["nextFireDate"],
                    "a fixed alarm moved: \(kept.text)")

            // The scheduler has re-planned too: its one fire timer is New York's occurrence, due
            // at New York's instant (the Los Angeles one gone). Only then is it moved to now.
            var plan = ""
            let replanned = await eventually(timeout: .seconds(10)) {
                plan = (try? await s.inDatabase("scheduler") {
                    try await $0.query("""
                        SELECT (count(*) FILTER (WHERE occurrence_at = \(dueDate) AND due_at = \(dueDate)))::text || ' of ' || count(*)::text
                        FROM timers WHERE alarm_id = \(id) AND kind = 'fire'
                        """).first(String.self)
                }) ?? nil ?? ""
                return plan == "1 of 1"
            }
            #expect(replanned, "the scheduler's fire timers (New York's due at its instant, all): \(plan)")

            // It fires at New York's time, and only there.
            let movedDue = try await s.dueIn(id, seconds: 1)
            var lastFired: Date?
            let fired = await eventually(timeout: .seconds(30), every: .milliseconds(200)) {
                let a = try? await s.request(.GET, "/v1/alarms/\(id)", token: u.token)
                lastFired = a?.json["lastFiredDate"]?.stringValue.flatMap(ISOTime.parse)
                return lastFired != nil
            }
            // lastFiredDate is when it rang (its timer's due time, to the millisecond the API gives;
            // a Date from the database and one parsed from ISO text differ below it); the
            // occurrence is New York's.
            let rang = lastFired.map { abs($0.timeIntervalSince(movedDue)) < 0.001 } ?? false
            #expect(fired && rang, "fired at \(String(describing: lastFired)), due \(movedDue)")
            await s.settle()
            let fires = try await s.inDatabase("scheduler") {
                try await $0.query("SELECT occurrence_at FROM fires WHERE alarm_id = \(id) AND kind = 'fire'").all(Date.self)
            }
            #expect(fires == [dueDate], "fires: \(fires)")
            let westTimers = try await s.inDatabase("scheduler") {
                try await $0.query("SELECT count(*)::int FROM timers WHERE alarm_id = \(id) AND occurrence_at = \(westFire)").first(Int.self) ?? -1
            }
            #expect(westTimers == 0, "the Los Angeles occurrence is still planned")

            // The home zone is the user's to set, and checked; setting it takes the fixed alarms
            // kept at home time (the profile's zone until now) along, at the same local time.
            #expect(try await s.request(.PATCH, "/v1/me", token: u.token, json: ["homeTimezone": "Mars/Olympus"]).status == 400)
            let home = try await s.request(.PATCH, "/v1/me", token: u.token, json: ["homeTimezone": "Europe/Lisbon"])
            #expect(home.json["homeTimezone"]?.stringValue == "Europe/Lisbon", "\(home.text)")
            let followed = await eventually(timeout: .seconds(10)) {
                let a = try? await s.request(.GET, "/v1/alarms/\(fixedId)", token: u.token)
                return a?.json["schedule"]?["timezone"]?.stringValue == "Europe/Lisbon" && a?.json["schedule"]?["timeOfDay"]?.stringValue == hm
            }
            #expect(followed, "the fixed alarm did not follow the home zone")
        }
    }
}
