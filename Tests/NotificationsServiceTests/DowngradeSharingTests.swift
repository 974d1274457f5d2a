import Contracts
import Foundation
import Messaging
import Support
@testable import SuiteSupport
import Testing

/// Tier changes as `chronir-api.md` §9.4 says (issue 41 item 3): Premium → Free or Plus
/// suspends the owner's sharing (members lose access and are told), → Free switches off
/// alarms beyond 2, and an upgrade gives back what it may. `TierHandlers.apply` runs when
/// billing's entitlement changes (the grace period over); here the operator's request calls
/// the same code. Real services, a local push server.
@Suite("Downgrades and upgrades of shared alarms")
struct DowngradeSharingTests {
    /// The `alarm_changed` notifications a live stream received: (alarm, change, reason).
    static func changes(_ live: SSEClient) -> [(alarm: String, change: String, reason: String?)] {
        live.events.withLock { events in
            events.compactMap { e in
                guard e.event == "alarm_changed", let json = try? JSONCoding.decode(JSONValue.self, from: Data(e.data.utf8)),
                      let id = json["data"]?["alarmId"]?.stringValue, let change = json["data"]?["change"]?.stringValue else { return nil }
                return (id, change, json["data"]?["reason"]?.stringValue)
            }
        }
    }

    static func strings(_ v: JSONValue?) -> [String] { v?.arrayValue?.compactMap(\.stringValue) ?? [] }

    @Test("Premium → Free suspends sharing and switches off alarms beyond 2; members lose access and are told; Premium again gives both back")
    func premiumToFreeAndBack() async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        try await withTestSuite(label: "downgrade", start: { s in
            try s.startCore()
            try s.startInvitations()
            try s.startNotifications(push)
        }) { s in
            let owner = try await s.signup("Owner")
            _ = try await s.setTier(owner, "premium")
            let member = try await s.signup("Member")
            let neighbour = try await s.signup("Neighbour")
            #expect(try await s.request(.PUT, "/v1/me/devices/iphone", token: member.token, json: ["platform": "ios", "pushToken": "member-ios"]).status == 200)
            try await s.waitForDevices(member, count: 1)
            let live = SSEClient(http: s.http, url: try await s.gatewayURL() + "/v1/me/events", token: member.token)
            defer { Task { await live.close() } }
            #expect(await eventually { live.connected.withLock { $0 } })

            // A group with the neighbour in it, a group alarm, an alarm shared with the member
            // and assigned to them, and two alarms of the owner's own.
            let group = try await s.request(.POST, "/v1/groups", token: owner.token, json: ["name": "Street", "iconName": "house"])
            let g = try #require(group.json["id"]?.stringValue, "\(group.text)")
            let link = try await s.request(.POST, "/v1/invitations", token: owner.token, json: ["type": "group", "referenceId": g])
            let code = try #require(link.json["id"]?.stringValue, "\(link.text)")
            #expect(try await s.request(.POST, "/v1/invitations/\(code)/accept", token: neighbour.token).status == 200)
            var ids: [String] = []
            for (k, title) in ["Bins", "Street sweep", "Own 1", "Own 2"].enumerated() {
                var body: [String: Any] = ["title": title, "schedule": scheduleJSON("monthly", day: k + 1)]
                if title == "Street sweep" { body["groupId"] = g }
                let r = try await s.request(.POST, "/v1/alarms", token: owner.token, json: body)
                ids.append(try #require(r.json["id"]?.stringValue, "\(r.text)"))
            }
            let (shared, grouped) = (ids[0], ids[1])
            try await s.share(shared, owner: owner, with: [member])
            #expect(try await s.request(.PATCH, "/v1/alarms/\(shared)", token: owner.token, json: ["assignedTo": member.uid]).status == 200)
            let groupAlarm = try await s.request(.GET, "/v1/alarms/\(grouped)", token: owner.token)
            #expect(Self.strings(groupAlarm.json["sharedWith"]) == [neighbour.uid], "\(groupAlarm.text)")
            let heard = Self.changes(live).count

            // The downgrade executes.
            let down = try await s.setTier(owner, "free")
            #expect(down.deactivated.count == 2, "alarms beyond 2 switched off: \(down.deactivated)")
            for id in [shared, grouped] {
                let a = try await s.request(.GET, "/v1/alarms/\(id)", token: owner.token)
                #expect(a.status == 200, "the owner keeps the alarm: \(a.text)")
                #expect(Self.strings(a.json["sharedWith"]).isEmpty && a.json["groupId"] == .null && a.json["isShared"] == .bool(false), "\(a.text)")
            }
            #expect(try await s.request(.GET, "/v1/alarms/\(shared)", token: member.token).status == 404)
            #expect(try await s.request(.GET, "/v1/alarms/\(grouped)", token: neighbour.token).status == 404)
            // Told: the live stream in words (a reason), the phone by a visible push.
            #expect(await eventually(timeout: .seconds(10)) {
                Self.changes(live).dropFirst(heard).contains { $0.alarm == shared && $0.change == "removed" && $0.reason == "owner-downgraded" }
            }, "\(Self.changes(live))")
            #expect(await eventually(timeout: .seconds(10)) {
                push.requests("apns").contains { $0.json?["reason"] as? String == "owner-downgraded" }
            })
            let told = try #require(push.requests("apns").first { $0.json?["reason"] as? String == "owner-downgraded" })
            #expect(told.headers["apns-push-type"] == "alert", "a member who loses access is told, not only synced")
            #expect(((told.json?["aps"] as? [String: Any])?["alert"] as? [String: Any])?["title"] as? String == "No longer shared: Bins")
            let active = try await s.request(.GET, "/v1/alarms?active=true", token: owner.token)
            #expect(active.json["alarms"]?.arrayValue?.count == 2, "\(active.text)")
            // A Free owner cannot share again by hand either.
            #expect(try await s.request(.PATCH, "/v1/alarms/\(shared)", token: owner.token, json: ["groupId": g]).code == "CA002")

            // The neighbour leaves the group while the sharing is suspended.
            #expect(try await s.request(.DELETE, "/v1/groups/\(g)/members/\(neighbour.uid)", token: neighbour.token).status == 204)
            let left = await eventually(timeout: .seconds(10)) {
                let rows = try? await s.inDatabase("alarms") {
                    try await $0.query("SELECT count(*)::int FROM group_members WHERE group_id = \(g) AND user_id = \(neighbour.uid)").first(Int.self)
                }
                return rows == 0
            }
            #expect(left, "alarms never heard that the neighbour left")

            // Premium again: what may come back does.
            let heardBefore = Self.changes(live).count
            let up = try await s.setTier(owner, "premium")
            #expect(up.deactivated.isEmpty)
            let back = try await s.request(.GET, "/v1/alarms/\(shared)", token: member.token)
            #expect(back.status == 200, "\(back.text)")
            #expect(Self.strings(back.json["sharedWith"]) == [member.uid] && back.json["assignedTo"]?.stringValue == member.uid, "\(back.text)")
            let groupBack = try await s.request(.GET, "/v1/alarms/\(grouped)", token: owner.token)
            #expect(groupBack.json["groupId"]?.stringValue == g, "\(groupBack.text)")
            #expect(Self.strings(groupBack.json["sharedWith"]).isEmpty, "who left the group does not come back: \(groupBack.text)")
            let allActive = try await s.request(.GET, "/v1/alarms?active=true", token: owner.token)
            #expect(allActive.json["alarms"]?.arrayValue?.count == 4, "\(allActive.text)")
            #expect(await eventually(timeout: .seconds(10)) {
                Self.changes(live).dropFirst(heardBefore).contains { $0.alarm == shared && $0.change == "updated" && $0.reason == "owner-upgraded" }
            }, "\(Self.changes(live))")

            let types = try await s.checkPublishedEvents(["alarms", "notifications"])
            #expect(types.contains("alarms.alarm-upserted"), "\(types)")
        }
    }

    @Test("Premium → Plus suspends sharing but keeps every alarm on; Plus → Free switches off alarms beyond 2 and Plus gives them back")
    func premiumToPlusAndPlusToFree() async throws {
        try await withTestSuite(label: "downgrade_plus", start: { s in
            try s.startCore()
            try s.startInvitations()
        }) { s in
            let owner = try await s.signup("Owner")
            _ = try await s.setTier(owner, "premium")
            let member = try await s.signup("Member")
            var ids: [String] = []
            for k in 0..<4 {
                let r = try await s.request(.POST, "/v1/alarms", token: owner.token, json: ["title": "Alarm \(k)", "schedule": scheduleJSON("monthly", day: k + 1)])
                ids.append(try #require(r.json["id"]?.stringValue, "\(r.text)"))
            }
            try await s.share(ids[0], owner: owner, with: [member])

            let plus = try await s.setTier(owner, "plus")
            #expect(plus.deactivated.isEmpty, "Plus keeps unlimited alarms")
            #expect(try await s.request(.GET, "/v1/alarms/\(ids[0])", token: member.token).status == 404, "Plus shares nothing")
            #expect(Self.strings(try await s.request(.GET, "/v1/alarms/\(ids[0])", token: owner.token).json["sharedWith"]).isEmpty)
            #expect(try await s.request(.GET, "/v1/alarms?active=true", token: owner.token).json["alarms"]?.arrayValue?.count == 4)

            let free = try await s.setTier(owner, "free")
            #expect(free.deactivated.count == 2)
            #expect(try await s.request(.GET, "/v1/alarms?active=true", token: owner.token).json["alarms"]?.arrayValue?.count == 2)
            // One of the switched-off alarms is deleted meanwhile: it stays deleted.
            let gone = try #require(free.deactivated.first)
            #expect(try await s.request(.DELETE, "/v1/alarms/\(gone)", token: owner.token).status == 204)

            let again = try await s.setTier(owner, "plus")
            #expect(again.deactivated.isEmpty)
            #expect(try await s.request(.GET, "/v1/alarms?active=true", token: owner.token).json["alarms"]?.arrayValue?.count == 3)
            #expect(try await s.request(.GET, "/v1/alarms/\(gone)", token: owner.token).status == 404)
            // Plus does not bring sharing back; Premium does.
            #expect(try await s.request(.GET, "/v1/alarms/\(ids[0])", token: member.token).status == 404)
            _ = try await s.setTier(owner, "premium")
            #expect(try await s.request(.GET, "/v1/alarms/\(ids[0])", token: member.token).status == 200)
        }
    }
}
