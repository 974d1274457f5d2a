import Contracts
import Foundation
import Messaging
import Support
@testable import SuiteSupport
import Testing

/// The fire lead (`CHRONIR_FIRE_LEAD`, 10 s by default): the scheduler announces a fire ahead
/// of its instant, and notifications and the gateway hold it until then.
extension NotificationsTests {
    /// A user with a webhook device and a connected live stream.
    func listeningUser(_ s: TestSuite, _ push: FakePushServer, _ name: String) async throws -> (TestUser, SSEClient) {
        let u = try await s.signup(name)
        try await device(s, u, "hook", ["platform": "web", "webhookUrl": "\(push.baseURL)/hook/\(name.lowercased())"])
        try await s.waitForDevices(u, count: 1)
        let live = SSEClient(http: s.http, url: try await s.gatewayURL() + "/v1/me/events", token: u.token)
        #expect(await eventually { live.connected.withLock { $0 } })
        return (u, live)
    }

    /// A yearly alarm of `u` (its fire timer is far ahead until a test moves it).
    func annualAlarm(_ s: TestSuite, _ u: TestUser, _ title: String) async throws -> String {
        let created = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": title, "schedule": scheduleJSON("annual", day: 1)])
        return try #require(created.json["id"]?.stringValue, "\(created.text)")
    }

    @Test("a fire announced ahead waits for its instant: not in the inbox, the live stream or the push queue before it; at it, everywhere once")
    func announcedAhead() async throws {
        try await withSuite { s, push in
            let (u, live) = try await listeningUser(s, push, "Early")
            defer { Task { await live.close() } }
            let witness = try await liveWitness(s)
            defer { Task { await witness.live.close() } }
            let id = try await annualAlarm(s, u, "Ahead")

            let due = try await s.dueIn(id, seconds: 6)
            #expect(await eventually(timeout: .seconds(5)) { (try? await s.firedAt(id)) != nil }, "the fire was not announced ahead")
            let fired = try #require(try await s.firedAt(id))
            #expect(fired < due, "fired \(fired) for \(due)")
            // Notifications has it, waiting: its inbox row carries the instant.
            #expect(await eventually(timeout: .seconds(4)) {
                let at = try? await s.inDatabase("notifications") {
                    try await $0.query("SELECT created_at FROM inbox WHERE user_id = \(u.uid)").first(Date.self)
                }
                return at.map { abs($0.timeIntervalSince(due)) < 0.002 } ?? false
            })
            let early = Date()
            #expect(early < due.addingTimeInterval(-0.5), "too slow to look before the instant")
            let inbox = try await s.request(.GET, "/v1/me/notifications", token: u.token)
            #expect(inbox.json["notifications"]?.arrayValue?.isEmpty == true, "\(inbox.text)")
            #expect(live.ids.isEmpty)
            #expect(push.requests("webhook").isEmpty)

            #expect(await eventually(timeout: .seconds(15)) { live.ids.count == 1 && push.requests("webhook").count == 1 })
            let arrived = try #require(live.events.withLock { $0.first?.receivedAt })
            #expect(arrived >= due, "live \(arrived) before \(due)")
            #expect(arrived < due.addingTimeInterval(2), "live \(arrived) long after \(due)")
            let hook = try #require(push.requests("webhook").first)
            #expect(hook.at >= due, "webhook \(hook.at) before \(due)")
            let after = try await s.request(.GET, "/v1/me/notifications", token: u.token)
            #expect(after.json["notifications"]?.arrayValue?.count == 1)
            // Everything settled and the gateway has applied all of it: a second copy would be here.
            await s.settle()
            try await passed(witness, s)
            #expect(live.ids.count == 1, "\(live.ids)")
            #expect(push.requests("webhook").count == 1)
        }
    }

    @Test("a push announced ahead goes at its instant, not at the next poll: with deliveries looked for every 5 s, the webhook still comes within 0.5 s of the instant")
    func pushAtItsInstant() async throws {
        try await withSuite(deliveryPoll: "5s") { s, push in
            let (u, live) = try await listeningUser(s, push, "Punctual")
            defer { Task { await live.close() } }
            let id = try await annualAlarm(s, u, "On the dot")
            let due = try await s.dueIn(id, seconds: 6)
            #expect(await eventually(timeout: .seconds(5)) { await s.inboxCount(u) == 1 }, "the fire did not reach notifications ahead of its instant")
            #expect(push.requests("webhook").isEmpty, "pushed before its instant")
            #expect(await eventually(timeout: .seconds(15)) { push.requests("webhook").count == 1 })
            let hook = try #require(push.requests("webhook").first)
            #expect(hook.at >= due, "webhook \(hook.at) before \(due)")
            // Polling alone would have sent it up to 5 s late (at the first poll after the instant).
            #expect(hook.at < due.addingTimeInterval(0.5), "webhook \(hook.at), \(hook.at.timeIntervalSince(due)) s after \(due)")
        }
    }

    @Test("a fire announced ahead and then deleted before its instant never rings: withdrawn from inbox, live stream and push queue")
    func withdrawnBeforeInstant() async throws {
        try await withSuite { s, push in
            let (u, live) = try await listeningUser(s, push, "Changed")
            defer { Task { await live.close() } }
            let witness = try await liveWitness(s)
            defer { Task { await witness.live.close() } }
            let id = try await annualAlarm(s, u, "Gone")
            let keptID = try await annualAlarm(s, u, "Kept")

            let due = try await s.dueIn(id, seconds: 9)
            #expect(await eventually(timeout: .seconds(5)) { await s.inboxCount(u) == 1 }, "the fire did not reach notifications ahead of its instant")
            // A notification of the same user that is due now waits behind the waiting one
            // (each user's stream is in id order)…
            _ = try await s.dueIn(keptID, seconds: 0)
            #expect(await eventually(timeout: .seconds(5)) { await s.inboxCount(u) == 2 })
            // The gateway has applied the one due now (a later notification reached the
            // witness), and still holds it back.
            await s.settle(deliveries: false)
            try await passed(witness, s)
            #expect(live.ids.isEmpty, "\(live.ids)")
            // …and goes out as soon as the one in front is withdrawn.
            #expect(Date() < due.addingTimeInterval(-3), "too slow to withdraw before the instant")
            #expect(try await s.request(.DELETE, "/v1/alarms/\(id)", token: u.token).status == 204)

            #expect(await eventually(timeout: .seconds(5)) { live.ids.count == 1 }, "\(live.ids)")
            // Past the withdrawn fire's instant, and everything published by then applied by
            // notifications, its deliveries and the gateway: had it not been withdrawn, it would
            // have rung by now.
            #expect(await eventually(timeout: .seconds(15)) { Date() > due }, "the instant never came")
            await s.settle()
            try await passed(witness, s)
            let titles = live.events.withLock { $0.compactMap { e in
                (try? JSONSerialization.jsonObject(with: Data(e.data.utf8)) as? [String: Any])?["title"] as? String
            } }
            #expect(titles == ["Chronir: Kept"])
            #expect(push.requests("webhook").count == 1)
            #expect((push.requests("webhook").first?.json?["data"] as? [String: Any])?["alarmId"] as? String == keptID)
            let inbox = try await s.request(.GET, "/v1/me/notifications", token: u.token)
            #expect(inbox.json["notifications"]?.arrayValue?.map { $0["data"]?["alarmId"]?.stringValue } == [keptID])
            #expect(try await s.firedAt(id) == nil, "the withdrawn fire's record stays")
            let dropped = try await s.inDatabase("notifications") {
                try await $0.query("SELECT count(*)::int FROM deliveries WHERE state = 'dropped' AND last_error = 'fire withdrawn'").first(Int.self)
            }
            #expect(dropped == 1)
            let types = try await s.checkPublishedEvents(["scheduler", "notifications"])
            #expect(types.contains(SchedulerEvents.fireWithdrawn.type))
            #expect(types.contains(NotificationsEvents.notificationWithdrawn.type))
        }
    }

    @Test("a gateway restarted while a fire waits for its instant still streams it live at the instant")
    func gatewayRestartKeepsWaiting() async throws {
        try await withSuite { s, _ in
            let u = try await s.signup("Restart")
            let id = try await annualAlarm(s, u, "Across")
            let due = try await s.dueIn(id, seconds: 9)
            #expect(await eventually(timeout: .seconds(5)) { await s.inboxCount(u) == 1 })

            let gateway = try #require(s.running.withLock { $0.first { $0.name == "gateway" } })
            await gateway.stop()
            s.running.withLock { $0.removeAll { $0.name == "gateway" } }
            s.gatewayPort.withLock { $0 = nil }
            try s.startGateway()
            let live = SSEClient(http: s.http, url: try await s.gatewayURL() + "/v1/me/events", token: u.token)
            defer { Task { await live.close() } }
            #expect(await eventually { live.connected.withLock { $0 } })
            #expect(Date() < due, "too slow to restart before the instant")
            #expect(live.ids.isEmpty)

            #expect(await eventually(timeout: .seconds(15)) { live.ids.count == 1 }, "the restarted gateway lost the waiting fire")
            let arrived = try #require(live.events.withLock { $0.first?.receivedAt })
            #expect(arrived >= due, "live \(arrived) before \(due)")
            // The restarted gateway has applied everything published (a later notification
            // reached the witness through it): a second copy would be here.
            let after = try await liveWitness(s)
            defer { Task { await after.live.close() } }
            await s.settle()
            try await passed(after, s)
            #expect(live.ids.count == 1, "\(live.ids)")
        }
    }
}
