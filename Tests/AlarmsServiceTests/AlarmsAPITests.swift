import Contracts
import Foundation
import Messaging
import Support
@testable import SuiteSupport
import Testing

/// The alarms service through the gateway over HTTP.
@Suite("Alarms through the gateway")
struct AlarmsAPITests {
    func withSuite(creationsPerMinute: Int = 1000, _ body: (TestSuite) async throws -> Void) async throws {
        try await withTestSuite(label: "alarms", start: { s in
            try s.startCore(creationsPerMinute: creationsPerMinute)
            try s.startInvitations()
        }, body)
    }

    func create(_ s: TestSuite, _ u: TestUser, _ extra: [String: Any] = [:], schedule: [String: Any] = scheduleJSON()) async throws -> HTTPResult {
        var body: [String: Any] = ["title": "Change HVAC Filter", "schedule": schedule]
        for (k, v) in extra { body[k] = v }
        return try await s.request(.POST, "/v1/alarms", token: u.token, json: body)
    }

    func alarmCount(_ s: TestSuite) async throws -> Int {
        try await s.inDatabase("alarms") { try await $0.query("SELECT count(*)::int FROM alarms").first(Int.self) ?? 0 }
    }

    @Test("create computes nextFireDate; GET returns it with its version as ETag; offline ids are idempotent")
    func createAndGet() async throws {
        try await withSuite { s in
            let u = try await s.signup("Lex", timezone: "Asia/Manila")
            let r = try await create(s, u, ["id": "offline-0001", "note": NSNull()],
                                     schedule: scheduleJSON(zone: "Asia/Manila", start: "2026-02-06T00:00:00Z"))
            #expect(r.status == 201, "\(r.text)")
            #expect(r.json["id"]?.stringValue == "offline-0001")
            #expect(r.json["ownerId"]?.stringValue == u.uid)
            #expect(r.json["version"]?.intValue == 1)
            #expect(r.json["isActive"] == .bool(true))
            let next = try #require(r.json["nextFireDate"]?.stringValue.flatMap(ISOTime.parse))
            #expect(next > Date())
            #expect(Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "Asia/Manila")!, from: next).day == 1)
            #expect(r.header("ETag") == "\"1\"")
            let get = try await s.request(.GET, "/v1/alarms/offline-0001", token: u.token)
            #expect(get.status == 200)
            #expect(get.json == r.json)
            // The same id and body again: one alarm, answered 200.
            let again = try await create(s, u, ["id": "offline-0001", "note": NSNull()],
                                         schedule: scheduleJSON(zone: "Asia/Manila", start: "2026-02-06T00:00:00Z"))
            #expect(again.status == 200)
            #expect(again.json == r.json)
            let clash = try await create(s, u, ["id": "offline-0001", "title": "Something else"])
            #expect(clash.status == 409)
            #expect(clash.code == "CA018")
            #expect(try await alarmCount(s) == 1)
        }
    }

    @Test("the 3rd active alarm of a Free user is refused with CA001 and accepted after disabling one")
    func freeLimit() async throws {
        try await withSuite { s in
            let u = try await s.signup("Free")
            let a = try await create(s, u)
            #expect(a.status == 201)
            #expect(try await create(s, u).status == 201)
            let third = try await create(s, u)
            #expect(third.status == 403)
            #expect(third.code == "CA001")
            // A disabled alarm does not count.
            #expect(try await create(s, u, ["isActive": false]).status == 201)
            let id = try #require(a.json["id"]?.stringValue)
            let off = try await s.request(.PATCH, "/v1/alarms/\(id)", token: u.token, json: ["isActive": false])
            #expect(off.status == 200)
            #expect(off.json["version"]?.intValue == 2)
            #expect(try await create(s, u).status == 201)
            // Re-enabling would make three.
            let on = try await s.request(.PATCH, "/v1/alarms/\(id)", token: u.token, json: ["isActive": true])
            #expect(on.status == 403)
            #expect(on.code == "CA001")
            // Plus lifts the limit.
            try await s.setTier(u, "plus")
            #expect(try await s.request(.PATCH, "/v1/alarms/\(id)", token: u.token, json: ["isActive": true]).status == 200)
        }
    }

    @Test("a stale version gets CA010 with the current document: 412 for a stale If-Match, 409 for a stale body version")
    func conflicts() async throws {
        try await withSuite { s in
            let u = try await s.signup("Sync")
            let id = try #require(try await create(s, u).json["id"]?.stringValue)
            let first = try await s.request(.PATCH, "/v1/alarms/\(id)", token: u.token, json: ["title": "Edited on phone"], headers: ["If-Match": "\"1\""])
            #expect(first.status == 200)
            #expect(first.header("ETag") == "\"2\"")
            let stale = try await s.request(.PATCH, "/v1/alarms/\(id)", token: u.token, json: ["title": "Edited on tablet"], headers: ["If-Match": "\"1\""])
            #expect(stale.status == 412, "\(stale.text)")
            #expect(stale.code == "CA010")
            #expect(stale.json["status"]?.intValue == 412)
            #expect(stale.header("Content-Type")?.hasPrefix("application/problem+json") == true)
            #expect(stale.json["details"]?["version"]?.intValue == 2)
            #expect(stale.json["details"]?["title"]?.stringValue == "Edited on phone")
            let staleBody = try await s.request(.PATCH, "/v1/alarms/\(id)", token: u.token, json: ["title": "x", "version": 1])
            #expect(staleBody.status == 409, "\(staleBody.text)")
            #expect(staleBody.code == "CA010")
            let ok = try await s.request(.PATCH, "/v1/alarms/\(id)", token: u.token, json: ["title": "Merged", "version": 2])
            #expect(ok.json["version"]?.intValue == 3)
            let staleDelete = try await s.request(.DELETE, "/v1/alarms/\(id)", token: u.token, headers: ["If-Match": "2"])
            #expect(staleDelete.status == 412, "\(staleDelete.text)")
            #expect(staleDelete.code == "CA010")
            #expect(try await s.request(.DELETE, "/v1/alarms/\(id)", token: u.token, headers: ["If-Match": "3"]).status == 204)
            let gone = try await s.request(.GET, "/v1/alarms/\(id)", token: u.token)
            #expect(gone.status == 404)
            #expect(gone.code == "CA006")
        }
    }

    @Test("foreign users cannot learn an alarm exists; shared members read and complete but do not edit or delete")
    func authorization() async throws {
        try await withSuite { s in
            let owner = try await s.signup("Owner")
            let member = try await s.signup("Member")
            let stranger = try await s.signup("Stranger")
            try await s.setTier(owner, "premium")
            let r = try await create(s, owner)
            #expect(r.status == 201, "\(r.text)")
            let id = try #require(r.json["id"]?.stringValue)
            try await s.share(id, owner: owner, with: [member])
            #expect(try await s.request(.GET, "/v1/alarms/\(id)", token: owner.token).json["isShared"] == .bool(true))
            for (method, body) in [(HTTPMethodName.GET, nil as [String: Any]?), (.PATCH, ["title": "x"]), (.DELETE, nil)] {
                let foreign = try await s.request(method.nio, "/v1/alarms/\(id)", token: stranger.token, json: body)
                let unknown = try await s.request(method.nio, "/v1/alarms/does-not-exist", token: stranger.token, json: body)
                #expect(foreign.status == 404 && unknown.status == 404)
                #expect(foreign.code == "CA006" && unknown.code == "CA006")
                #expect(foreign.json["message"]?.stringValue?.replacingOccurrences(of: id, with: "X")
                        == unknown.json["message"]?.stringValue?.replacingOccurrences(of: "does-not-exist", with: "X"))
            }
            #expect(try await s.request(.POST, "/v1/alarms/\(id)/completions", token: stranger.token, json: ["status": "completed"]).status == 404)
            #expect(try await s.request(.GET, "/v1/alarms/\(id)", token: member.token).status == 200)
            let edit = try await s.request(.PATCH, "/v1/alarms/\(id)", token: member.token, json: ["title": "mine now"])
            #expect(edit.status == 403)
            #expect(edit.code == "CA007")
            #expect(try await s.request(.DELETE, "/v1/alarms/\(id)", token: member.token).code == "CA007")
            let done = try await s.request(.POST, "/v1/alarms/\(id)/completions", token: member.token, json: ["status": "completed"])
            #expect(done.status == 201, "\(done.text)")
            #expect(done.json["completion"]?["userId"]?.stringValue == member.uid)
            #expect(done.json["completion"]?["userDisplayName"]?.stringValue == "Member")
            let cid = try #require(done.json["completion"]?["id"]?.stringValue)
            let immutable = try await s.request(.PATCH, "/v1/alarms/\(id)/completions/\(cid)", token: owner.token, json: ["note": "x"])
            #expect(immutable.status == 403)
            #expect(try await s.request(.DELETE, "/v1/alarms/\(id)/completions/\(cid)", token: member.token).status == 403)
            #expect(try await s.request(.DELETE, "/v1/alarms/\(id)/completions/\(cid)", token: stranger.token).status == 404)
            // Sharing needs Premium.
            let plus = try await s.signup("Plus")
            try await s.setTier(plus, "plus")
            let share = try await create(s, plus, ["sharedWith": [member.uid]])
            #expect(share.status == 403)
            #expect(share.code == "CA002")
        }
    }

    @Test("a completion twice for the same occurrence is recorded once; skip advances without lastCompletedDate")
    func completions() async throws {
        try await withSuite { s in
            let u = try await s.signup("Doer")
            try await s.setTier(u, "plus")   // the whole history (Free sees the last completion: EverydayRulesTests)
            let created = try await create(s, u, schedule: scheduleJSON("weekly", day: 1))
            let id = try #require(created.json["id"]?.stringValue)
            let due = try #require(created.json["nextFireDate"]?.stringValue)
            let first = try await s.request(.POST, "/v1/alarms/\(id)/completions", token: u.token, json: ["status": "completed", "note": "done early"])
            #expect(first.status == 201)
            #expect(first.json["completion"]?["scheduledDate"]?.stringValue == due)
            let advanced = try #require(first.json["alarm"]?["nextFireDate"]?.stringValue.flatMap(ISOTime.parse))
            #expect(advanced.timeIntervalSince(ISOTime.parse(due)!) == 7 * 86_400)
            #expect(first.json["alarm"]?["lastCompletedDate"]?.stringValue != nil)
            let twice = try await s.request(.POST, "/v1/alarms/\(id)/completions", token: u.token, json: ["status": "completed", "scheduledDate": due])
            #expect(twice.status == 200)
            #expect(twice.json["completion"]?["id"] == first.json["completion"]?["id"])
            let skip = try await s.request(.POST, "/v1/alarms/\(id)/completions", token: u.token, json: ["status": "skipped"])
            #expect(skip.status == 201)
            #expect(skip.json["alarm"]?["lastCompletedDate"] == first.json["alarm"]?["lastCompletedDate"])
            let bad = try await s.request(.POST, "/v1/alarms/\(id)/completions", token: u.token,
                                          json: ["status": "completed", "scheduledDate": "2026-01-06T09:30:00Z"])
            #expect(bad.status == 400)
            #expect(try await s.request(.POST, "/v1/alarms/\(id)/completions", token: u.token, json: ["status": "done"]).status == 400)
            let history = try await s.request(.GET, "/v1/alarms/\(id)/completions", token: u.token)
            #expect(history.status == 200)
            let items = try #require(history.json["completions"]?.arrayValue, "no completions array: \(history.text)")
            #expect(items.count == 2)
            #expect(items.first?["status"]?.stringValue == "skipped")  // newest first
            #expect(history.json["streak"]?.intValue == 0)  // the latest occurrence was skipped
            let filtered = try await s.request(.GET, "/v1/alarms/\(id)/completions?status=completed&limit=1", token: u.token)
            let filteredItems = try #require(filtered.json["completions"]?.arrayValue, "no completions array: \(filtered.text)")
            #expect(filteredItems.count == 1)
            let csv = try await s.request(.GET, "/v1/alarms/\(id)/completions.csv", token: u.token)
            #expect(csv.status == 200)
            #expect(csv.header("Content-Type")?.hasPrefix("text/csv") == true)
            let lines = csv.text.split(separator: "\r\n")
            #expect(lines.first == "id,alarmId,scheduledDate,completedAt,status,userId,userDisplayName,onTime,note,snoozeCount")
            #expect(lines.count == 3)
            #expect(csv.text.contains("done early"))
            let count = try await s.inDatabase("alarms") {
                try await $0.query("SELECT count(*)::int FROM completions").first(Int.self) ?? 0
            }
            #expect(count == 2)
        }
    }

    @Test("the delta feed reproduces the server state on an empty client after creates, edits and deletes")
    func deltaFeed() async throws {
        try await withSuite { s in
            let u = try await s.signup("Syncer")
            let other = try await s.signup("Other")
            try await s.setTier(u, "premium")
            var ids: [String] = []
            for k in 0..<6 {
                ids.append(try #require(try await create(s, u, ["title": "Alarm \(k)"], schedule: scheduleJSON(day: k + 1)).json["id"]?.stringValue))
            }
            // A client syncs once, then goes offline while things change.
            var local: [String: JSONValue] = [:]
            var cursor = "0"
            func sync() async throws {
                var more = true
                while more {
                    let page = try await s.request(.GET, "/v1/alarms?since=\(cursor)&limit=2", token: u.token)
                    #expect(page.status == 200, "\(page.text)")
                    let changes = try #require(page.json["changes"]?.arrayValue, "bad page \(page.text)")
                    for c in changes {
                        let id = c["id"]!.stringValue!
                        if c["deleted"] == .bool(true) { local[id] = nil } else { local[id] = c["alarm"] }
                    }
                    cursor = page.json["nextCursor"]!.stringValue!
                    more = page.json["hasMore"] == .bool(true)
                }
            }
            try await sync()
            #expect(local.count == 6)
            _ = try await s.request(.PATCH, "/v1/alarms/\(ids[0])", token: u.token, json: ["title": "Renamed"])
            _ = try await s.request(.PATCH, "/v1/alarms/\(ids[1])", token: u.token, json: ["schedule": scheduleJSON("weekly", day: 3)])
            _ = try await s.request(.DELETE, "/v1/alarms/\(ids[2])", token: u.token)
            _ = try await s.request(.POST, "/v1/alarms/\(ids[3])/completions", token: u.token, json: ["status": "completed"])
            ids.append(try #require(try await create(s, u, ["title": "New"]).json["id"]?.stringValue))
            // Shared with someone else, then unshared: the other user's feed gets it, then a tombstone.
            try await s.share(ids[4], owner: u, with: [other])
            let otherFeed1 = try await s.request(.GET, "/v1/alarms?since=0", token: other.token)
            let otherChanges1 = try #require(otherFeed1.json["changes"]?.arrayValue, "\(otherFeed1.text)")
            #expect(otherChanges1.count == 1)
            _ = try await s.request(.PATCH, "/v1/alarms/\(ids[4])", token: u.token, json: ["sharedWith": []])
            let otherFeed2 = try await s.request(.GET, "/v1/alarms?since=\(otherFeed1.json["nextCursor"]!.stringValue!)", token: other.token)
            #expect(otherFeed2.json["changes"]?.stringValue == nil)
            let otherChanges2 = try #require(otherFeed2.json["changes"]?.arrayValue, "\(otherFeed2.text)")
            #expect(otherChanges2.count == 1)
            #expect(otherChanges2.first?["deleted"] == .bool(true))
            try await sync()
            let server = try await s.request(.GET, "/v1/alarms?limit=200", token: u.token)
            let serverAlarms = try #require(server.json["alarms"]?.arrayValue, "\(server.text)")
            #expect(local.count == serverAlarms.count)
            for a in serverAlarms { #expect(local[a["id"]!.stringValue!] == a) }
            // Nothing new: the cursor stays.
            let quiet = try await s.request(.GET, "/v1/alarms?since=\(cursor)", token: u.token)
            #expect(quiet.json["nextCursor"]?.stringValue == cursor)
            #expect(try await s.request(.GET, "/v1/alarms?since=abc", token: u.token).status == 400)
        }
    }

    @Test("every invalid field gets 400 with its CA code and name, and nothing is written")
    func badInput() async throws {
        try await withSuite { s in
            let u = try await s.signup("Careless")
            try await s.setTier(u, "plus")
            let cases: [([String: Any], [String: Any], String, String)] = [
                (["title": ""], scheduleJSON(), "CA016", "title"),
                (["title": String(repeating: "x", count: 101)], scheduleJSON(), "CA016", "title"),
                (["note": String(repeating: "x", count: 501)], scheduleJSON(), "CA016", "note"),
                (["snoozeDurationMinutes": 0], scheduleJSON(), "CA016", "snoozeDurationMinutes"),
                (["preAlarmOffsets": ["2w"]], scheduleJSON(), "CA016", "preAlarmOffsets"),
                (["id": "x"], scheduleJSON(), "CA016", "id"),
                (["photoURL": "ftp://nope"], scheduleJSON(), "CA016", "photoURL"),
                (["vibrationEnabled": "yes"], scheduleJSON(), "CA016", "vibrationEnabled"),
                ([:], scheduleJSON(day: 32), "CA008", "schedule.dayOfMonth"),
                ([:], scheduleJSON(time: "25:00"), "CA008", "schedule.timeOfDay"),
                ([:], scheduleJSON(zone: "Mars/Base"), "CA008", "schedule.timezone"),
                ([:], scheduleJSON("weekly", day: 9), "CA008", "schedule.daysOfWeek"),
                ([:], ["type": "daily", "timeOfDay": "09:00", "timezone": "UTC", "startDate": "2026-01-01T00:00:00Z"], "CA008", "schedule.type"),
                ([:], ["type": "weekly", "timeOfDay": "09:00", "timezone": "UTC"], "CA016", "schedule.startDate"),
            ]
            for (extra, schedule, code, field) in cases {
                let r = try await create(s, u, extra, schedule: schedule)
                #expect(r.status == 400, "\(extra) \(schedule): \(r.text)")
                #expect(r.code == code, "\(r.text)")
                #expect(r.json["message"]?.stringValue?.contains(field) == true, "\(r.text)")
            }
            let unknown = try await s.request(.PATCH, "/v1/alarms/whatever1", token: u.token, json: ["color": "red"])
            #expect(unknown.status == 400)
            #expect(try await alarmCount(s) == 0)
            let ok = try await create(s, u)
            let id = try #require(ok.json["id"]?.stringValue)
            let badPatch = try await s.request(.PATCH, "/v1/alarms/\(id)", token: u.token, json: ["title": "New", "schedule": scheduleJSON(day: 40)])
            #expect(badPatch.code == "CA008")
            let unchanged = try await s.request(.GET, "/v1/alarms/\(id)", token: u.token)
            #expect(unchanged.json["title"]?.stringValue == "Change HVAC Filter")
            #expect(unchanged.json["version"]?.intValue == 1)
            let readOnly = try await s.request(.PATCH, "/v1/alarms/\(id)", token: u.token, json: ["nextFireDate": "2030-01-01T00:00:00Z"])
            #expect(readOnly.status == 400)
            #expect(readOnly.json["message"]?.stringValue?.contains("nextFireDate is read-only") == true)
        }
    }

    @Test("tier rules: notes and extended warnings need Plus; creation is rate limited with Retry-After")
    func tiersAndRateLimit() async throws {
        try await withSuite(creationsPerMinute: 5) { s in
            let u = try await s.signup("Frugal")
            #expect(try await create(s, u, ["note": "Size 20x25"]).code == "CA002")
            #expect(try await create(s, u, ["preAlarmOffsets": ["7d"]]).code == "CA002")
            #expect(try await create(s, u, ["preAlarmWarningHours": 2]).code == "CA002")
            try await s.setTier(u, "plus")
            #expect(try await create(s, u, ["note": "Size 20x25", "preAlarmOffsets": ["7d", "1h"]]).status == 201)
            for _ in 0..<4 { #expect(try await create(s, u).status == 201) }
            let limited = try await create(s, u)
            #expect(limited.status == 429)
            #expect(limited.code == "CA019")
            let retry = Int(limited.header("Retry-After") ?? "") ?? 0
            #expect((1...60).contains(retry))
        }
    }

    @Test("a downgrade to Free deactivates alarms beyond 2 and deletes nothing")
    func downgrade() async throws {
        try await withSuite { s in
            let u = try await s.signup("Lapsed")
            try await s.setTier(u, "plus")
            for k in 0..<4 { #expect(try await create(s, u, schedule: scheduleJSON(day: k + 1)).status == 201) }
            let result = try await s.setTier(u, "free")
            #expect(result.deactivated.count == 2)
            let all = try await s.request(.GET, "/v1/alarms", token: u.token)
            let alarms = try #require(all.json["alarms"]?.arrayValue, "\(all.text)")
            #expect(alarms.count == 4)
            #expect(alarms.filter { $0["isActive"] == .bool(true) }.count == 2)
            let active = try await s.request(.GET, "/v1/alarms?active=true", token: u.token)
            let activeAlarms = try #require(active.json["alarms"]?.arrayValue, "\(active.text)")
            #expect(activeAlarms.count == 2)
        }
    }

    @Test("queries: mine, shared, type, search, upcoming/overdue and pages sorted by nextFireDate")
    func queries() async throws {
        try await withSuite { s in
            let u = try await s.signup("Lister")
            let friend = try await s.signup("Friend")
            try await s.setTier(u, "premium")
            try await s.setTier(friend, "premium")
            for k in 0..<5 { _ = try await create(s, u, ["title": "Monthly \(k)"], schedule: scheduleJSON(day: 5 - k)) }
            _ = try await create(s, u, ["title": "Weekly rent"], schedule: scheduleJSON("weekly", day: 3))
            let sharedThing = try #require(try await create(s, friend, ["title": "Shared thing"]).json["id"]?.stringValue)
            try await s.share(sharedThing, owner: friend, with: [u])
            var seen: [String] = []
            var cursor: String? = nil
            repeat {
                let page = try await s.request(.GET, "/v1/alarms?limit=3" + (cursor.map { "&cursor=\($0)" } ?? ""), token: u.token)
                let alarms = try #require(page.json["alarms"]?.arrayValue, "\(page.text)")
                seen += alarms.compactMap { $0["nextFireDate"]?.stringValue }
                cursor = page.json["nextCursor"]?.stringValue
            } while cursor != nil
            #expect(seen.count == 7)
            #expect(seen == seen.sorted())
            func count(_ query: String) async throws -> Int {
                let r = try await s.request(.GET, "/v1/alarms?\(query)", token: u.token)
                return try #require(r.json["alarms"]?.arrayValue, "\(r.text)").count
            }
            #expect(try await count("scope=mine") == 6)
            #expect(try await count("scope=shared") == 1)
            #expect(try await count("type=weekly") == 1)
            #expect(try await count("q=RENT") == 1)
            #expect(try await count("q=%25") == 0)
            #expect(try await count("when=upcoming") == 7)
            #expect(try await count("when=overdue") == 0)
            #expect(try await s.request(.GET, "/v1/alarms?scope=nobody", token: u.token).status == 400)
            #expect(try await s.request(.GET, "/v1/alarms?limit=0", token: u.token).status == 400)
        }
    }

    @Test("iCalendar feeds: one alarm and all of mine, with RRULE and VTIMEZONE, lines folded")
    func calendar() async throws {
        try await withSuite { s in
            let u = try await s.signup("Cal")
            try await s.setTier(u, "plus")
            let r = try await create(s, u, ["title": "Pay rent; call landlord, then relax", "note": "Line one\nLine two"],
                                     schedule: ["type": "monthly", "relativeWeek": 5, "relativeDayOfWeek": 5, "timeOfDay": "09:00",
                                                "timezone": "America/New_York", "startDate": "2026-01-01T00:00:00Z"])
            let id = try #require(r.json["id"]?.stringValue)
            let one = try await s.request(.GET, "/v1/alarms/\(id)/calendar.ics", token: u.token)
            #expect(one.status == 200)
            #expect(one.header("Content-Type")?.hasPrefix("text/calendar") == true)
            #expect(one.text.hasPrefix("BEGIN:VCALENDAR\r\n"))
            #expect(one.text.contains("RRULE:FREQ=MONTHLY;INTERVAL=1;BYDAY=-1FR"))
            #expect(one.text.contains("DTSTART;TZID=America/New_York:"))
            #expect(one.text.contains("BEGIN:VTIMEZONE\r\nTZID:America/New_York"))
            #expect(one.text.contains("SUMMARY:Pay rent\\; call landlord\\, then relax"))
            #expect(one.text.contains("DESCRIPTION:Line one\\nLine two"))
            for line in one.text.split(separator: "\r\n") { #expect(line.utf8.count <= 75) }
            let mine = try await s.request(.GET, "/v1/me/calendar.ics", token: u.token)
            #expect(mine.text.components(separatedBy: "BEGIN:VEVENT").count == 2)
        }
    }
}

/// HTTP methods by name for table-driven tests.
enum HTTPMethodName {
    case GET, PATCH, DELETE
    var nio: NIOHTTPMethodAlias {
        switch self {
        case .GET: .GET
        case .PATCH: .PATCH
        case .DELETE: .DELETE
        }
    }
}
