import Contracts
import Foundation
import Messaging
import Support
@testable import SuiteSupport
import Testing

/// A plan changed elsewhere reaches the user's open pages and phones (issue 43 item 3): the
/// notifications service keeps each user's tier from `accounts.user-upserted` and, when it
/// changes, sends a silent `plan_changed`. A profile edit that leaves the tier is not one.
@Suite("Plan changes told live")
struct PlanChangeLiveTests {
    /// The `plan_changed` events a live stream received: their `data.tier`, in order.
    static func planChanges(_ live: SSEClient) -> [String] {
        live.events.withLock { events in
            events.compactMap { e -> String? in
                guard e.event == "plan_changed", let json = try? JSONCoding.decode(JSONValue.self, from: Data(e.data.utf8)) else { return nil }
                return json["data"]?["tier"]?.stringValue
            }
        }
    }

    @Test("an upgrade and a lapse each reach the live stream and the phone once as a silent plan_changed; a name change or the same tier again does not; the inbox a person reads leaves them out")
    func planChangesAreTold() async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        try await withTestSuite(label: "plan-live", start: { s in
            try s.startCore()
            try s.startNotifications(push)
        }) { s in
            let user = try await s.signup("Buyer")
            #expect(try await s.request(.PUT, "/v1/me/devices/iphone", token: user.token, json: ["platform": "ios", "pushToken": "buyer-ios"]).status == 200)
            try await s.waitForDevices(user, count: 1)
            let live = SSEClient(http: s.http, url: try await s.gatewayURL() + "/v1/me/events", token: user.token)
            defer { Task { await live.close() } }
            #expect(await eventually { live.connected.withLock { $0 } })

            // A profile change that keeps the plan: recorded, not told.
            #expect(try await s.request(.PATCH, "/v1/me", token: user.token, json: ["displayName": "Buyer Renamed"]).status == 200)
            _ = try await s.setTier(user, "plus")
            #expect(await eventually(timeout: .seconds(10)) { Self.planChanges(live) == ["plus"] },
                    "the upgrade did not reach the live stream: \(Self.planChanges(live))")
            // The phone: a background push naming the tier, nothing shown.
            #expect(await eventually(timeout: .seconds(10)) {
                push.requests("apns").contains { $0.path == "/3/device/buyer-ios" && $0.json?["tier"] as? String == "plus" }
            }, "no silent push: \(push.requests("apns").map(\.path))")
            let apns = try #require(push.requests("apns").first { $0.json?["tier"] as? String == "plus" })
            #expect(apns.headers["apns-push-type"] == "background")
            #expect((apns.json?["aps"] as? [String: Any])?["alert"] == nil)

            // The same tier again (a renewal), then a lapse to Free.
            _ = try await s.setTier(user, "plus")
            _ = try await s.setTier(user, "free")
            #expect(await eventually(timeout: .seconds(10)) { Self.planChanges(live).count >= 2 })
            // Give a wrongly told renewal the time to arrive, then count.
            try await Task.sleep(for: .seconds(1))
            #expect(Self.planChanges(live) == ["plus", "free"], "\(Self.planChanges(live))")
            let stored = try await s.inDatabase("notifications") {
                try await $0.query("SELECT count(*)::int FROM inbox WHERE user_id = \(user.uid) AND type = 'plan_changed'").first(Int.self)
            }
            #expect(stored == 2)
            let inbox = try await s.request(.GET, "/v1/me/notifications", token: user.token)
            #expect(inbox.json["notifications"]?.arrayValue?.contains { $0["type"]?.stringValue == "plan_changed" } == false, "\(inbox.text)")
            // Nor can it be acknowledged there: a sync signal, not something a person read.
            let planId = try #require(live.ids.first)
            let ack = try await s.request(.POST, "/v1/me/notifications/\(planId)/ack", token: user.token)
            #expect(ack.status == 404, "\(ack.text)")

            // A deleted account leaves no tier behind.
            #expect(try await s.request(.DELETE, "/v1/me", token: user.token).status == 204)
            #expect(await eventually(timeout: .seconds(10)) {
                let n = try? await s.inDatabase("notifications") {
                    try await $0.query("SELECT count(*)::int FROM user_tiers WHERE user_id = \(user.uid)").first(Int.self)
                }
                return n == 0
            }, "the deleted user's tier is still kept")
        }
    }
}
