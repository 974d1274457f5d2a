import Foundation
import InvitationsService
import Messaging
import Support
@testable import SuiteSupport
import Testing

/// Subscribable calendar feeds, read without credentials and parsed by an independent
/// iCalendar implementation (Python's icalendar, RRULEs expanded by python-dateutil).
@Suite("Calendar feeds")
struct CalendarFeedTests {
    /// `scripts/ics_feed_check.py` on `ics`: the calendar's properties and each event's alarms
    /// and next occurrences from `after`.
    func parsed(_ ics: String, after: Date, count: Int = 3) throws -> JSONValue {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("feed-\(UUID().uuidString).ics")
        try ics.write(to: file, atomically: true, encoding: .utf8)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ProcessInfo.processInfo.environment["CHRONIR_TEST_PYTHON"] ?? "/usr/bin/python3")
        process.arguments = [root.appendingPathComponent("scripts/ics_feed_check.py").path, file.path,
                             String(Int(after.timeIntervalSince1970)), String(count)]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestSetupError("ics_feed_check.py failed: \(String(decoding: output, as: UTF8.self).prefix(2000))")
        }
        return try JSONCoding.decode(JSONValue.self, from: output)
    }

    @Test("a feed URL serves the calendar without credentials; an independent parser finds the API's next instants and the pre-alarms; group feeds name the assignee; ETag, revocation")
    func feeds() async throws {
        try await withTestSuite(label: "feeds", start: { s in
            try s.startCore()
            try s.start("invitations", migrations: InvitationsService.migrations, build: InvitationsService.build)
        }) { s in
            let owner = try await s.signup("Planner", timezone: "Asia/Manila")
            let member = try await s.signup("Helper")
            let stranger = try await s.signup("Stranger")
            _ = try await s.setTier(owner, "premium")
            func create(_ body: [String: Any]) async throws -> String {
                let r = try await s.request(.POST, "/v1/alarms", token: owner.token, json: body)
                return try #require(r.json["id"]?.stringValue, "\(r.text)")
            }
            let rent = try await create(["title": "Pay rent", "preAlarmOffsets": ["1d", "1h"],
                                         "schedule": scheduleJSON("monthly", day: 15, time: "09:30", zone: "Asia/Manila")])
            let bins = try await create(["title": "Bins out", "schedule": scheduleJSON("weekly", day: 3, time: "20:00", zone: "Europe/London")])

            // A group with a member, and a group alarm assigned to them.
            let g = try #require(try await s.request(.POST, "/v1/groups", token: owner.token, json: ["name": "Flat"]).json["id"]?.stringValue)
            let inv = try await s.request(.POST, "/v1/invitations", token: owner.token, json: ["type": "group", "referenceId": g])
            let code = try #require(inv.json["id"]?.stringValue, "\(inv.text)")
            #expect(try await s.request(.POST, "/v1/invitations/\(code)/accept", token: member.token).status == 200)
            var filter: String?
            #expect(await eventually {
                let r = try? await s.request(.POST, "/v1/alarms", token: owner.token, json: [
                    "title": "Change filter", "groupId": g, "assignedTo": member.uid, "schedule": scheduleJSON("annual", day: 20)])
                filter = r?.status == 201 ? r?.json["id"]?.stringValue : nil
                return filter != nil
            })
            let filterId = try #require(filter)
            // A group alarm the owner keeps from the member (taken off its sharedWith): the member
            // reads it nowhere, the group's feed included (issue 57: the feed listed every alarm of
            // the group).
            let kept = try await s.request(.POST, "/v1/alarms", token: owner.token, json: [
                "title": "Owner only", "groupId": g, "schedule": scheduleJSON("annual", day: 21)])
            let keptId = try #require(kept.json["id"]?.stringValue, "\(kept.text)")
            let unshared = try await s.request(.PATCH, "/v1/alarms/\(keptId)", token: owner.token, json: ["sharedWith": [String]()])
            #expect(unshared.status == 200, "\(unshared.text)")
            #expect(try await s.request(.GET, "/v1/alarms/\(keptId)", token: member.token).status == 404)

            // The caller's feed.
            let made = try await s.request(.POST, "/v1/me/calendar-feeds", token: owner.token, json: ["scope": "me"])
            #expect(made.status == 201, "\(made.text)")
            let url = try #require(made.json["url"]?.stringValue)
            #expect(url.range(of: #"/cal/[0-9a-f]{32}\.ics$"#, options: .regularExpression) != nil, "\(url)")
            #expect(made.json["webcalURL"]?.stringValue?.hasPrefix("webcal://") == true)
            let path = String(url[url.range(of: "/cal/")!.lowerBound...])
            let feed = try await s.request(.GET, path)
            #expect(feed.status == 200, "\(feed.text)")
            #expect(feed.header("content-type")?.hasPrefix("text/calendar") == true)
            let etag = try #require(feed.header("etag"))
            let now = Date()
            let doc = try parsed(feed.text, after: now)
            #expect(doc["calendar"]?["REFRESH-INTERVAL"] != nil && doc["calendar"]?["X-PUBLISHED-TTL"] != nil, "\(doc)")
            let events = doc["events"]?.arrayValue ?? []
            #expect(events.count == 4, "\(doc)")
            for id in [rent, bins, filterId] {
                let api = try await s.request(.GET, "/v1/alarms/\(id)", token: owner.token)
                let next = try #require(api.json["nextFireDate"]?.stringValue.flatMap(ISOTime.parse))
                let event = try #require(events.first { $0["uid"]?.stringValue == "\(id)@chronir.app" }, "no event for \(id)")
                #expect(event["next"]?.arrayValue?.first?.intValue == Int(next.timeIntervalSince1970), "\(id): \(event) vs \(next)")
            }
            let rentEvent = events.first { $0["uid"]?.stringValue == "\(rent)@chronir.app" }
            #expect(rentEvent?["alarms"]?.arrayValue?.compactMap(\.intValue) == [0, 60, 1440], "\(String(describing: rentEvent))")
            // Unchanged: 304 to a conditional request.
            #expect(try await s.request(.GET, path, headers: ["If-None-Match": etag]).status == 304)

            // A group feed: the group's alarms, with who is assigned.
            let groupFeed = try await s.request(.POST, "/v1/me/calendar-feeds", token: member.token, json: ["scope": "group", "groupId": g])
            #expect(groupFeed.status == 201, "\(groupFeed.text)")
            let groupURL = try #require(groupFeed.json["url"]?.stringValue)
            let groupDoc = try parsed(try await s.request(.GET, String(groupURL[groupURL.range(of: "/cal/")!.lowerBound...])).text, after: now)
            let groupEvents = groupDoc["events"]?.arrayValue ?? []
            #expect(groupEvents.map { $0["uid"]?.stringValue } == ["\(filterId)@chronir.app"], "\(groupDoc)")
            #expect(groupEvents.first?["description"]?.stringValue?.contains("Assigned to Helper") == true, "\(groupDoc)")
            #expect(try await s.request(.POST, "/v1/me/calendar-feeds", token: stranger.token, json: ["scope": "group", "groupId": g]).status == 404)
            #expect(try await s.request(.POST, "/v1/me/calendar-feeds", token: owner.token, json: ["scope": "everyone"]).status == 400)

            // Listed without their secrets; a deleted feed's URL is gone.
            let list = try await s.request(.GET, "/v1/me/calendar-feeds", token: owner.token)
            let feeds = list.json["feeds"]?.arrayValue ?? []
            #expect(feeds.count == 1 && feeds.first?["url"] == nil && feeds.first?["lastFetchedAt"]?.stringValue != nil, "\(list.text)")
            let feedId = try #require(made.json["id"]?.stringValue)
            #expect(try await s.request(.DELETE, "/v1/me/calendar-feeds/\(feedId)", token: member.token).status == 404)
            #expect(try await s.request(.DELETE, "/v1/me/calendar-feeds/\(feedId)", token: owner.token).status == 204)
            #expect(try await s.request(.GET, path).status == 404)
            #expect(try await s.request(.GET, "/cal/not-a-token.ics").status == 404)
        }
    }

    @Test("a note that carries CR LF and a whole event cannot inject it: the independent parser finds one event, holding the text (titles refuse control characters)")
    func crlfInjection() async throws {
        try await withTestSuite(label: "feed-crlf", start: { s in try s.startCore() }) { s in
            let owner = try await s.signup("Writer")
            _ = try await s.setTier(owner, "plus")   // notes need Plus
            let injected = "\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:victim@chronir.app\r\nSTATUS:CANCELLED\r\nDTSTART:20300101T000000Z\r\n"
                + "RRULE:FREQ=DAILY\r\nSUMMARY:Injected"
            let r = try await s.request(.POST, "/v1/alarms", token: owner.token, json: [
                "title": "Rent", "note": "Pay it" + injected, "schedule": scheduleJSON("monthly", day: 15)])
            let id = try #require(r.json["id"]?.stringValue, "\(r.text)")
            let made = try await s.request(.POST, "/v1/me/calendar-feeds", token: owner.token, json: ["scope": "me"])
            let url = try #require(made.json["url"]?.stringValue, "\(made.text)")
            let feed = try await s.request(.GET, String(url[url.range(of: "/cal/")!.lowerBound...]))
            #expect(feed.status == 200, "\(feed.text)")
            let doc = try parsed(feed.text, after: Date())
            let events = doc["events"]?.arrayValue ?? []
            #expect(events.map { $0["uid"]?.stringValue } == ["\(id)@chronir.app"], "\(doc)")
            #expect(events.first?["description"]?.stringValue?.contains("UID:victim@chronir.app") == true, "\(doc)")
            #expect(!feed.text.contains("\r\nSTATUS:CANCELLED"), "\(feed.text)")
        }
    }
}
