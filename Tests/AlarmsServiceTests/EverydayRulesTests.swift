import Contracts
import Foundation
import Messaging
import Support
@testable import SuiteSupport
import Testing

/// The rules a user meets every day (issue 42), through the running suite: snooze lengths and
/// state, the tier's history and sounds, analytics by consent, the photo upload limit.
@Suite("Everyday rules")
struct EverydayRulesTests {
    /// A daily 09:00 (UTC) alarm of `u`, with `extra` members in the body.
    func daily(_ s: TestSuite, _ u: TestUser, _ extra: [String: Any] = [:]) async throws -> HTTPResult {
        let body: [String: Any] = ["title": "Stretch", "schedule": scheduleJSON("custom", day: 1)].merging(extra) { $1 }
        return try await s.request(.POST, "/v1/alarms", token: u.token, json: body)
    }

    /// Makes the alarm's pending occurrence the one a day earlier (it rang and awaits its mark).
    func makeDue(_ s: TestSuite, _ id: String) async throws -> Date {
        try await s.inDatabase("alarms") {
            try await $0.query("UPDATE alarms SET next_fire_date = next_fire_date - interval '1 day' WHERE id = \(id) RETURNING next_fire_date")
                .first(Date.self) ?? Date()
        }
    }

    func snooze(_ s: TestSuite, _ u: TestUser, _ id: String, _ minutes: Int? = nil) async throws -> HTTPResult {
        try await s.request(.POST, "/v1/alarms/\(id)/snooze", token: u.token, json: minutes.map { ["minutes": $0] } ?? [:])
    }

    @Test("snoozes: the alarm's length (the user's default when created without one), Free 10 min and 1 h, Plus any custom length, maxSnoozeCount; the alarm shows snoozedUntil until it moves on; the history keeps the count")
    func snoozeRules() async throws {
        try await withTestSuite(label: "snoozerules", start: { try $0.startCore() }) { s in
            let free = try await s.signup("Dozer")
            // The user's default snooze length reaches the alarms service (US-7.1).
            let me = try await s.request(.PATCH, "/v1/me", token: free.token, json: ["settings": ["defaultSnoozeMinutes": 10]])
            #expect(me.status == 200, "\(me.text)")
            #expect(await eventually {
                let n = try? await s.inDatabase("alarms") {
                    try await $0.query("SELECT default_snooze_minutes FROM users WHERE user_id = \(free.uid)").first(Int32?.self)
                }
                return n == 10
            })
            let created = try await daily(s, free)
            #expect(created.json["snoozeDurationMinutes"]?.intValue == 10, "\(created.text)")
            #expect(created.json["maxSnoozeCount"]?.intValue == 3 && created.json["snoozeCount"]?.intValue == 0)
            #expect(created.json["snoozedUntil"] == .null, "\(created.text)")
            let id = try #require(created.json["id"]?.stringValue)
            let occurrence = try await makeDue(s, id)

            let options = try await s.request(.GET, "/v1/alarms/\(id)/snooze", token: free.token)
            #expect(options.json["minutes"] == .array([.number(10), .number(60)]), "\(options.text)")
            #expect(options.json["defaultMinutes"]?.intValue == 10 && options.json["customAllowed"] == .bool(false), "\(options.text)")
            #expect(options.json["available"] == .bool(true) && options.json["maxSnoozes"]?.intValue == 3, "\(options.text)")

            // No length: the alarm's.
            let first = try await snooze(s, free, id)
            #expect(first.status == 200, "\(first.text)")
            let refire = try #require(first.json["refireAt"]?.stringValue.flatMap(ISOTime.parse))
            #expect(abs(refire.timeIntervalSinceNow - 600) < 10, "refire \(refire)")
            #expect(first.json["alarm"]?["snoozedUntil"]?.stringValue.flatMap(ISOTime.parse) == refire, "\(first.text)")
            #expect(first.json["alarm"]?["snoozeCount"]?.intValue == 1)
            #expect(first.json["alarm"]?["version"]?.intValue == (created.json["version"]?.intValue ?? 0) + 1, "a snooze is a new version")
            // Free: a day, or any custom length, is Plus; lengths out of bounds are refused.
            let day = try await snooze(s, free, id, 1440)
            #expect(day.status == 403 && day.code == "CA002", "\(day.text)")
            let custom = try await snooze(s, free, id, 45)
            #expect(custom.code == "CA002" && custom.json["message"]?.stringValue?.contains("custom") == true, "\(custom.text)")
            for bad in [0, 20_000] { #expect(try await snooze(s, free, id, bad).status == 400, "\(bad) minutes") }
            // Every device reads the state from the alarm itself.
            let shown = try await s.request(.GET, "/v1/alarms/\(id)", token: free.token)
            #expect(shown.json["snoozedUntil"]?.stringValue.flatMap(ISOTime.parse) == refire && shown.json["snoozeCount"]?.intValue == 1)
            #expect(try await snooze(s, free, id, 60).json["alarm"]?["snoozeCount"]?.intValue == 2)
            // Done: the alarm moves on and forgets the snooze; the log keeps it (US-5.2).
            let done = try await s.request(.POST, "/v1/alarms/\(id)/completions", token: free.token, json: ["status": "completed"])
            #expect(done.status == 201, "\(done.text)")
            #expect(done.json["completion"]?["snoozeCount"]?.intValue == 2, "\(done.text)")
            #expect(done.json["completion"]?["scheduledDate"]?.stringValue.flatMap(ISOTime.parse) == occurrence)
            #expect(done.json["alarm"]?["snoozedUntil"] == .null && done.json["alarm"]?["snoozeCount"]?.intValue == 0, "\(done.text)")
            let history = try await s.request(.GET, "/v1/alarms/\(id)/completions", token: free.token)
            #expect(history.json["completions"]?.arrayValue?.first?["snoozeCount"]?.intValue == 2, "\(history.text)")

            // Plus: custom lengths, the alarm's limit.
            let plus = try await s.signup("Planner")
            try await s.setTier(plus, "plus")
            for bad in [0, 11] { #expect(try await daily(s, plus, ["maxSnoozeCount": bad]).status == 400, "maxSnoozeCount \(bad)") }
            let limited = try await daily(s, plus, ["maxSnoozeCount": 2, "snoozeDurationMinutes": 1440])
            let pid = try #require(limited.json["id"]?.stringValue, "\(limited.text)")
            _ = try await makeDue(s, pid)
            let plusOptions = try await s.request(.GET, "/v1/alarms/\(pid)/snooze", token: plus.token)
            #expect(plusOptions.json["minutes"]?.arrayValue?.count == 4 && plusOptions.json["customAllowed"] == .bool(true), "\(plusOptions.text)")
            #expect(plusOptions.json["defaultMinutes"]?.intValue == 1440 && plusOptions.json["maxSnoozes"]?.intValue == 2)
            let odd = try await snooze(s, plus, pid, 45)
            #expect(odd.status == 200, "\(odd.text)")
            #expect(abs((odd.json["refireAt"]?.stringValue.flatMap(ISOTime.parse) ?? .distantPast).timeIntervalSinceNow - 2700) < 10)
            let byDefault = try await snooze(s, plus, pid)
            #expect(abs((byDefault.json["refireAt"]?.stringValue.flatMap(ISOTime.parse) ?? .distantPast).timeIntervalSinceNow - 86_400) < 10,
                    "\(byDefault.text)")
            let third = try await snooze(s, plus, pid, 10)
            #expect(third.status == 409 && third.code == "CA026", "\(third.text)")
            #expect(try await s.request(.PATCH, "/v1/alarms/\(pid)", token: plus.token, json: ["maxSnoozeCount": 3]).status == 200)
            #expect(try await snooze(s, plus, pid, 10).json["snoozeCount"]?.intValue == 3, "a raised limit allows one more")
            // Back on Free, a day-long default becomes the nearest length Free has: the alarm stays snoozable.
            try await s.setTier(plus, "free")
            #expect(try await s.request(.GET, "/v1/alarms/\(pid)/snooze", token: plus.token).json["defaultMinutes"]?.intValue == 60)
        }
    }

    @Test("completions carry the device's completedAt (bounded); one after the missed window turns the missed log into a late completion, once, and the streak counts it")
    func lateCompletions() async throws {
        try await withTestSuite(label: "latemarks", start: { try $0.startCore(alarmsExtra: ["CHRONIR_MISSED_WINDOW": "1h"]) }) { s in
            let u = try await s.signup("Offline")
            // Due three hours ago, whatever the time of day: the late mark (10 minutes after the
            // occurrence) and the missed window's end (an hour after) are in the past. At the
            // default 09:00 the test failed when run between 09:00 and 09:10 UTC (a mark "in the
            // future"; make test, 2026-12-07).
            let threeHoursAgo = String(ISOTime.format(Date().addingTimeInterval(-3 * 3600)).dropFirst(11).prefix(5))
            let id = try #require(try await daily(s, u, ["schedule": scheduleJSON("custom", day: 1, time: threeHoursAgo)]).json["id"]?.stringValue)
            let occurrence = try await makeDue(s, id)
            #expect(occurrence < Date().addingTimeInterval(-2 * 3600), "the occurrence \(occurrence) is not hours back")
            let mark = { (body: [String: Any]) in
                try await s.request(.POST, "/v1/alarms/\(id)/completions", token: u.token,
                                    json: body.merging(["status": "completed", "scheduledDate": ISOTime.format(occurrence)]) { $1 })
            }
            // Out of bounds: ahead of the server's clock, or before the occurrence's window opened.
            let future = try await mark(["completedAt": ISOTime.format(Date().addingTimeInterval(3600))])
            #expect(future.status == 400 && future.json["details"]?["field"]?.stringValue == "completedAt", "\(future.text)")
            let early = try await mark(["completedAt": ISOTime.format(occurrence.addingTimeInterval(-2 * 86_400))])
            #expect(early.status == 400, "\(early.text)")

            // The missed window passes with no mark: the service logs it (as the scheduler's event does).
            let missedLog = try await s.inDatabase("alarms") { db -> String in
                let id2 = UUID().uuidString
                try await db.query("""
                    INSERT INTO completions (id, alarm_id, status, scheduled_date, completed_at, on_time, created_at)
                    VALUES (\(id2), \(id), 'missed', \(occurrence), \(occurrence.addingTimeInterval(3600)), false, now())
                    """).drain()
                try await db.query("UPDATE alarms SET next_fire_date = next_fire_date + interval '1 day' WHERE id = \(id)").drain()
                return id2
            }
            // The phone was offline: it marked the occurrence 10 minutes after it rang and sends it now.
            let at = occurrence.addingTimeInterval(600)
            let late = try await mark(["completedAt": ISOTime.format(at)])
            #expect(late.status == 201, "\(late.text)")
            #expect(late.json["completion"]?["id"]?.stringValue == missedLog, "the missed log changed in place: \(late.text)")
            #expect(late.json["completion"]?["status"]?.stringValue == "completed" && late.json["completion"]?["onTime"] == .bool(true))
            #expect(late.json["completion"]?["completedAt"]?.stringValue.flatMap(ISOTime.parse) == at)
            #expect(late.json["completion"]?["lateAt"]?.stringValue != nil, "\(late.text)")
            let again = try await mark(["completedAt": ISOTime.format(at)])
            #expect(again.status == 200 && again.json["created"] == .bool(false), "a repeat changes nothing: \(again.text)")
            let history = try await s.request(.GET, "/v1/alarms/\(id)/completions", token: u.token)
            #expect(history.json["completions"]?.arrayValue?.count == 1, "one record, not two: \(history.text)")
            #expect(history.json["streak"]?.intValue == 1, "\(history.text)")
            let alarm = try await s.request(.GET, "/v1/alarms/\(id)", token: u.token)
            #expect(alarm.json["lastCompletedDate"]?.stringValue.flatMap(ISOTime.parse) == at, "\(alarm.text)")
        }
    }

    @Test("Free sees the last completion only (the rest kept, shown after an upgrade); the sound catalogue per tier; CA002 for what Plus gives")
    func tierLimits() async throws {
        try await withTestSuite(label: "tierlimits", start: { try $0.startCore() }) { s in
            let u = try await s.signup("Frugal")
            let id = try #require(try await daily(s, u).json["id"]?.stringValue)
            let next = try #require(try await s.request(.GET, "/v1/alarms/\(id)", token: u.token).json["nextFireDate"]?.stringValue.flatMap(ISOTime.parse))
            for daysBack in [3, 2, 1] {
                let r = try await s.request(.POST, "/v1/alarms/\(id)/completions", token: u.token, json: [
                    "status": "completed", "scheduledDate": ISOTime.format(next.addingTimeInterval(Double(-daysBack) * 86_400))])
                #expect(r.status == 201, "\(r.text)")
            }
            let locked = try await s.request(.GET, "/v1/alarms/\(id)/completions", token: u.token)
            #expect(locked.json["completions"]?.arrayValue?.count == 1, "\(locked.text)")
            #expect(locked.json["historyLocked"] == .bool(true) && locked.json["hiddenCount"]?.intValue == 2, "\(locked.text)")
            #expect(locked.json["completions"]?.arrayValue?.first?["scheduledDate"]?.stringValue.flatMap(ISOTime.parse)
                    == next.addingTimeInterval(-86_400), "the last completion")
            let csv = try await s.request(.GET, "/v1/alarms/\(id)/completions.csv", token: u.token)
            #expect(csv.text.split(separator: "\r\n").count == 2, "\(csv.text)")

            // Sounds: two on Free.
            let sounds = try await s.request(.GET, "/v1/sounds", token: u.token)
            let all = sounds.json["sounds"]?.arrayValue ?? []
            #expect(all.count == 8 && all.filter { $0["available"] == .bool(true) }.count == 2, "\(sounds.text)")
            #expect(try await s.request(.GET, "/v1/sounds").status == 401)
            let plusSound = try await daily(s, u, ["soundId": "birdsong", "isActive": false])
            #expect(plusSound.status == 403 && plusSound.code == "CA002", "\(plusSound.text)")
            let unknown = try await daily(s, u, ["soundId": "kazoo", "isActive": false])
            #expect(unknown.status == 400 && unknown.json["details"]?["field"]?.stringValue == "soundId", "\(unknown.text)")
            #expect(try await s.request(.PATCH, "/v1/alarms/\(id)", token: u.token, json: ["soundId": "gentle_chime"]).status == 200)
            #expect(try await s.request(.PATCH, "/v1/me", token: u.token, json: ["settings": ["soundId": "ocean_wave"]]).code == "CA002")
            #expect(try await s.request(.PATCH, "/v1/me", token: u.token, json: ["settings": ["soundId": "nope"]]).status == 400)

            // Plus: the whole history and library.
            try await s.setTier(u, "plus")
            let open = try await s.request(.GET, "/v1/alarms/\(id)/completions", token: u.token)
            #expect(open.json["completions"]?.arrayValue?.count == 3 && open.json["historyLocked"] == .bool(false), "\(open.text)")
            #expect(try await s.request(.PATCH, "/v1/alarms/\(id)", token: u.token, json: ["soundId": "birdsong"]).status == 200)
            #expect(try await s.request(.GET, "/v1/sounds", token: u.token).json["sounds"]?.arrayValue?.allSatisfy { $0["available"] == .bool(true) } == true)
        }
    }

    @Test("analytics by consent: nothing is derived or accepted before the user agrees; withdrawing erases what was kept")
    func analyticsConsent() async throws {
        try await withTestSuite(label: "consent", start: { try $0.startCore() }) { s in
            let u = try await s.signup("Private")
            func events() async throws -> Int {
                try await s.inDatabase("alarms") { try await $0.query("SELECT count(*)::int FROM analytics_events").first(Int.self) ?? 0 }
            }
            func consenting() async throws -> Int {
                try await s.inDatabase("alarms") { try await $0.query("SELECT count(*)::int FROM analytics_consent").first(Int.self) ?? 0 }
            }
            #expect(try await s.request(.GET, "/v1/me", token: u.token).json["analyticsConsent"] == .bool(false), "off until the user agrees")
            _ = try await daily(s, u)
            let sent = try await s.request(.POST, "/v1/analytics/events", token: u.token, json: ["events": [["name": "onboarding_completed"]]])
            #expect(sent.status == 202 && sent.json["accepted"]?.intValue == 0, "\(sent.text)")
            await s.settle()
            #expect(try await events() == 0, "an event was derived without consent")
            #expect(try await s.request(.PATCH, "/v1/me", token: u.token, json: ["analyticsConsent": NSNull()]).status == 400)

            let agreed = try await s.request(.PATCH, "/v1/me", token: u.token, json: ["analyticsConsent": true])
            #expect(agreed.json["analyticsConsent"] == .bool(true), "\(agreed.text)")
            #expect(await eventually { (try? await consenting()) == 1 })
            _ = try await daily(s, u)
            #expect(await eventually { (try? await events()) == 1 }, "the creation after consent is counted")
            #expect(try await s.request(.POST, "/v1/analytics/events", token: u.token,
                                        json: ["events": [["name": "onboarding_completed"]]]).json["accepted"]?.intValue == 1)

            #expect(try await s.request(.PATCH, "/v1/me", token: u.token, json: ["analyticsConsent": false]).status == 200)
            let erased = await eventually {
                let (kept, agreed) = (try? await events(), try? await consenting())
                return kept == 0 && agreed == 0
            }
            #expect(erased, "withdrawing erases the user's events")
        }
    }

    @Test("photo uploads: 3 a minute per user over every replica (CA019 with Retry-After), other users unaffected")
    func photoUploadLimit() async throws {
        try await withTestSuite(label: "photolimit", start: { try $0.startCore() }) { s in
            let u = try await s.signup("Snapper")
            try await s.setTier(u, "plus")
            let id = try #require(try await daily(s, u).json["id"]?.stringValue)
            let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data((0..<3000).map { UInt8($0 % 241) })
            for n in 1...3 {
                let r = try await s.request(.PUT, "/v1/alarms/\(id)/photo", token: u.token, bytes: jpeg + Data([UInt8(n)]), headers: ["Content-Type": "image/jpeg"])
                #expect(r.status == 200, "upload \(n): \(r.text)")
            }
            let fourth = try await s.request(.PUT, "/v1/alarms/\(id)/photo", token: u.token, bytes: jpeg, headers: ["Content-Type": "image/jpeg"])
            #expect(fourth.status == 429 && fourth.code == "CA019", "\(fourth.text)")
            let retry = Int(fourth.header("Retry-After") ?? "") ?? 0
            #expect((1...60).contains(retry), "Retry-After \(fourth.header("Retry-After") ?? "none")")
            let other = try await s.signup("Snapper2")
            try await s.setTier(other, "plus")
            let oid = try #require(try await daily(s, other).json["id"]?.stringValue)
            #expect(try await s.request(.PUT, "/v1/alarms/\(oid)/photo", token: other.token, bytes: jpeg, headers: ["Content-Type": "image/jpeg"]).status == 200)
        }
    }
}
