import Contracts
import Foundation
import InvitationsService
import Messaging
import Support
@testable import SuiteSupport
import Testing

/// Live changes of shared alarms (issue 41 item 2; `chronir-api.md` §1.2, §4.3 step 7, §4.4
/// step 4): when the owner edits, pauses, unshares or deletes, each other member's live stream
/// gets a silent `alarm_changed`, and their phones a background push (APNs `content-available`,
/// FCM data message) that the delta feed then answers. Real services, a local push server.
@Suite("Live changes of shared alarms")
struct SharedAlarmLiveTests {
    struct Change: Sendable {
        var change: String
        var alarmId: String
        var at: Date
    }

    /// The `alarm_changed` notifications a live stream received, in order.
    static func changes(_ live: SSEClient) -> [Change] {
        live.events.withLock { events in
            events.compactMap { e -> Change? in
                guard e.event == "alarm_changed", let json = try? JSONCoding.decode(JSONValue.self, from: Data(e.data.utf8)),
                      let change = json["data"]?["change"]?.stringValue, let id = json["data"]?["alarmId"]?.stringValue else { return nil }
                return Change(change: change, alarmId: id, at: e.receivedAt)
            }
        }
    }

    /// Shares `id` with `member` by an invitation to their account, and waits until they see it.
    func share(_ s: TestSuite, _ id: String, owner: TestUser, with member: TestUser) async throws {
        let invite = try await s.request(.POST, "/v1/invitations", token: owner.token,
                                         json: ["type": "alarm", "referenceId": id, "inviteeUserId": member.uid])
        let code = try #require(invite.json["id"]?.stringValue, "\(invite.text)")
        #expect(try await s.request(.POST, "/v1/invitations/\(code)/accept", token: member.token).status == 200)
        let visible = await eventually(timeout: .seconds(15)) {
            (try? await s.request(.GET, "/v1/alarms/\(id)", token: member.token).status) == 200
        }
        #expect(visible, "the accepted share did not reach alarms")
    }

    @Test("edit, snooze, pause, unshare and delete of a shared alarm reach the other member's live stream and phones as silent changes; whoever made a change is not told of it")
    func ownerChangesReachMembers() async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        try await withTestSuite(label: "shared-live", start: { s in
            try s.startCore()
            try s.start("invitations", migrations: InvitationsService.migrations, build: InvitationsService.build)
            try s.startNotifications(push)
        }) { s in
            let owner = try await s.signup("Owner")
            _ = try await s.setTier(owner, "premium")
            let member = try await s.signup("Member")
            #expect(try await s.request(.PUT, "/v1/me/devices/iphone", token: member.token, json: ["platform": "ios", "pushToken": "member-ios"]).status == 200)
            #expect(try await s.request(.PUT, "/v1/me/devices/pixel", token: member.token,
                                        json: ["platform": "android", "pushToken": "member-android"]).status == 200)
            try await s.waitForDevices(member, count: 2)
            let live = SSEClient(http: s.http, url: try await s.gatewayURL() + "/v1/me/events", token: member.token)
            defer { Task { await live.close() } }
            #expect(await eventually { live.connected.withLock { $0 } })

            let created = try await s.request(.POST, "/v1/alarms", token: owner.token,
                                              json: ["title": "Feed the cat", "schedule": scheduleJSON("annual", day: 1)])
            let id = try #require(created.json["id"]?.stringValue, "\(created.text)")
            try await share(s, id, owner: owner, with: member)
            // Who accepted is told too (their other screens learn of the alarm).
            #expect(await eventually { Self.changes(live).contains { $0.alarmId == id && $0.change == "updated" } },
                    "the acceptor's live stream did not learn of the alarm")
            let feedStart = try #require(try await s.request(.GET, "/v1/alarms?since=0", token: member.token).json["nextCursor"]?.stringValue)

            /// Waits for the first change of the alarm on the live stream after `start`; returns
            /// it with how long after `start` it came.
            func awaitChange(after start: Date) async throws -> (Change, TimeInterval) {
                func first() -> Change? { Self.changes(live).first { $0.alarmId == id && $0.at >= start } }
                let arrived = await eventually(timeout: .seconds(10)) { first() != nil }
                #expect(arrived, "no change after \(start) reached the live stream: \(Self.changes(live).map(\.change))")
                let c = try #require(first())
                return (c, c.at.timeIntervalSince(start))
            }

            var latencies: [TimeInterval] = []
            var start = Date()
            #expect(try await s.request(.PATCH, "/v1/alarms/\(id)", token: owner.token, json: ["title": "Feed the cat twice"]).status == 200)
            var (c, latency) = try await awaitChange(after: start)
            #expect(c.change == "updated")
            latencies.append(latency)

            // The phones: a background push on iOS, a data message on Android, nothing shown.
            #expect(await eventually(timeout: .seconds(10)) {
                push.requests("apns").contains { $0.path == "/3/device/member-ios" && $0.json?["change"] as? String == "updated" }
                    && push.requests("fcm").contains { (($0.json?["message"] as? [String: Any])?["data"] as? [String: String])?["type"] == "alarm_changed" }
            }, "no silent push: apns \(push.requests("apns").map(\.path)), fcm \(push.requests("fcm").count)")
            let apns = try #require(push.requests("apns").first { $0.json?["change"] as? String == "updated" })
            #expect(apns.headers["apns-push-type"] == "background")
            #expect(apns.headers["apns-priority"] == "5")
            let aps = try #require(apns.json?["aps"] as? [String: Any])
            #expect(aps["content-available"] as? Int == 1)
            #expect(aps["alert"] == nil && aps["sound"] == nil, "a silent push shows nothing: \(aps)")
            let fcm = try #require(push.requests("fcm").first { (($0.json?["message"] as? [String: Any])?["data"] as? [String: String])?["type"] == "alarm_changed" })
            let message = try #require(fcm.json?["message"] as? [String: Any])
            #expect(message["notification"] == nil, "a data message has no notification: \(message)")
            #expect((message["data"] as? [String: String])?["alarmId"] == id)

            // The member snoozes the ringing occurrence: the owner is told (a silent `snoozed`).
            // The occurrence is made due now in the alarms schema, as if the clock had reached it.
            try await s.inDatabase("alarms") {
                try await $0.query("UPDATE alarms SET next_fire_date = now() - interval '1 second' WHERE id = \(id)").drain()
            }
            let snoozed = try await s.request(.POST, "/v1/alarms/\(id)/snooze", token: member.token, json: ["minutes": 10])
            #expect(snoozed.status == 200, "\(snoozed.text)")
            #expect(await eventually(timeout: .seconds(10)) {
                let n = try? await s.inDatabase("notifications") {
                    try await $0.query("""
                        SELECT count(*)::int FROM inbox WHERE user_id = \(owner.uid) AND type = 'alarm_changed' AND data->>'change' = 'snoozed'
                        """).first(Int.self)
                }
                return n == 1
            }, "the owner was not told of the member's snooze")

            start = Date()
            #expect(try await s.request(.PATCH, "/v1/alarms/\(id)", token: owner.token, json: ["isPaused": true]).status == 200)
            (c, latency) = try await awaitChange(after: start)
            #expect(c.change == "updated")
            latencies.append(latency)

            // The delta feed answers the push: the paused alarm.
            let feed = try await s.request(.GET, "/v1/alarms?since=\(feedStart)", token: member.token)
            let entry = try #require(feed.json["changes"]?.arrayValue?.last { $0["id"]?.stringValue == id }, "\(feed.text)")
            #expect(entry["alarm"]?["isPaused"] == .bool(true), "\(feed.text)")
            let cursor = try #require(feed.json["nextCursor"]?.stringValue)

            start = Date()
            #expect(try await s.request(.DELETE, "/v1/alarms/\(id)/members/\(member.uid)", token: owner.token).status == 204)
            (c, latency) = try await awaitChange(after: start)
            #expect(c.change == "removed")
            latencies.append(latency)
            let removed = try await s.request(.GET, "/v1/alarms?since=\(cursor)", token: member.token)
            #expect(removed.json["changes"]?.arrayValue?.last { $0["id"]?.stringValue == id }?["deleted"] == .bool(true), "\(removed.text)")

            let heard = Self.changes(live).count
            try await share(s, id, owner: owner, with: member)
            #expect(await eventually { Self.changes(live).count > heard }, "the second acceptance was not heard")
            start = Date()
            #expect(try await s.request(.DELETE, "/v1/alarms/\(id)", token: owner.token).status == 204)
            (c, latency) = try await awaitChange(after: start)
            #expect(c.change == "deleted")
            latencies.append(latency)
            print("shared alarm changes reached the member's live stream after \(latencies.map { String(format: "%.3f s", $0) })")

            // Whoever made a change is not told of it: the owner heard only of the member's two acceptances.
            let ownerChanges = try await s.inDatabase("notifications") {
                try await $0.query("SELECT count(*)::int FROM inbox WHERE user_id = \(owner.uid) AND type = 'alarm_changed'").first(Int.self)
            }
            #expect(ownerChanges == 3, "two acceptances and the member's snooze")
            // The inbox a person reads leaves the silent entries out.
            let memberInbox = try await s.request(.GET, "/v1/me/notifications", token: member.token)
            #expect(memberInbox.json["notifications"]?.arrayValue?.contains { $0["type"]?.stringValue == "alarm_changed" } == false, "\(memberInbox.text)")
            let types = try await s.checkPublishedEvents(["alarms", "notifications"])
            #expect(types.isSuperset(of: ["alarms.alarm-upserted", "alarms.alarm-deleted", "notifications.notification-created"]), "\(types)")
        }
    }
}
