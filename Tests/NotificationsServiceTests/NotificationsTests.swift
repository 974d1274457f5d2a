import LoadFixtures
import Contracts
import Foundation
import Messaging
import NotificationsService
import SchedulerService
import Support
@testable import SuiteSupport
import Testing

/// Pushes, inbox and live stream through real services: the scheduler fires, notifications
/// renders and delivers to a local server speaking the APNs, FCM, OAuth and webhook protocols.
@Suite("Notifications")
struct NotificationsTests {
    func withSuite(deliveryPoll: String? = nil, _ body: (TestSuite, FakePushServer) async throws -> Void) async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        try await withTestSuite(label: "notify", start: { s in
            try s.startCore()
            try s.start("scheduler", migrations: SchedulerService.migrations,
                        extra: ["CHRONIR_SCHEDULER_PARTITIONS": "16"], build: SchedulerService.build)
            try s.startNotifications(push, poll: deliveryPoll)
            try s.startInvitations()
        }) { s in try await body(s, push) }
    }

    /// Creates an alarm and makes its pending occurrence due now (the scheduler's timer row is
    /// replaced by one due now, as if the clock had reached it).
    func fireNow(_ s: TestSuite, _ user: TestUser, title: String = "Change HVAC Filter", extra: [String: Any] = [:]) async throws -> String {
        var body: [String: Any] = ["title": title, "schedule": scheduleJSON("annual", day: 1)]
        body.merge(extra) { $1 }
        let created = try await s.request(.POST, "/v1/alarms", token: user.token, json: body)
        let id = try #require(created.json["id"]?.stringValue, "\(created.text)")
        try await s.fireAgain(id)
        return id
    }

    func device(_ s: TestSuite, _ u: TestUser, _ id: String, _ body: [String: Any]) async throws {
        let r = try await s.request(.PUT, "/v1/me/devices/\(id)", token: u.token, json: body)
        #expect(r.status == 200 || r.status == 201, "\(r.text)")
    }

    /// Another user listening on the live stream, who shows that the gateway has applied every
    /// notification published before a moment. The gateway applies the notifications stream in
    /// order, and the witness has nothing waiting in front of its own notifications: once one
    /// made after that moment reaches the witness, everything published before it has reached
    /// the gateway too, and whatever of it could have arrived (or doubled) on another user's
    /// live stream has had its chance. The witness is Plus (any number of alarms) and has no
    /// device (its fires push nothing).
    struct LiveWitness: Sendable {
        let user: TestUser
        let live: SSEClient
    }

    /// Signs a witness up (or reconnects `user`, e.g. to a restarted gateway) and waits until
    /// its live stream is connected. The caller closes `live`.
    func liveWitness(_ s: TestSuite, _ user: TestUser? = nil) async throws -> LiveWitness {
        let u: TestUser
        if let user {
            u = user
        } else {
            u = try await s.signup("Witness")
            _ = try await s.setTier(u, "plus")
        }
        let live = SSEClient(http: s.http, url: try await s.gatewayURL() + "/v1/me/events", token: u.token)
        #expect(await eventually { live.connected.withLock { $0 } }, "the witness's live stream did not connect")
        return LiveWitness(user: u, live: live)
    }

    /// Fires an alarm of the witness now and waits until it reaches the witness's live stream:
    /// from then on, the gateway has applied everything published before this call.
    func passed(_ w: LiveWitness, _ s: TestSuite, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let id = try await fireNow(s, w.user, title: "Witness")
        #expect(await eventually(timeout: .seconds(20)) { w.live.events.withLock { $0.contains { $0.data.contains(id) } } },
                "the witness's notification (alarm \(id)) did not reach its live stream", sourceLocation: sourceLocation)
    }

    @Test("a fire reaches APNs, FCM and a webhook with the Appendix C payloads, the inbox and a live SSE client")
    func fireEverywhere() async throws {
        try await withSuite { s, push in
            let u = try await s.signup("Lex")
            try await device(s, u, "iphone", ["platform": "ios", "pushToken": "ios-ok"])
            try await device(s, u, "pixel", ["platform": "android", "pushToken": "fcm-ok"])
            try await device(s, u, "hook", ["platform": "web", "webhookUrl": "\(push.baseURL)/hook/lex"])
            try await s.waitForDevices(u, count: 3)
            let live = SSEClient(http: s.http, url: try await s.gatewayURL() + "/v1/me/events", token: u.token)
            defer { Task { await live.close() } }
            #expect(await eventually { live.connected.withLock { $0 } })

            let id = try await fireNow(s, u)
            #expect(await eventually(timeout: .seconds(20)) {
                push.requests("apns").count == 1 && push.requests("fcm").count == 1 && push.requests("webhook").count == 1
            }, "apns \(push.requests("apns").count) fcm \(push.requests("fcm").count) webhook \(push.requests("webhook").count)")

            let apns = try #require(push.requests("apns").first)
            #expect(apns.path == "/3/device/ios-ok")
            #expect(apns.status == 200)
            #expect(apns.headers["apns-topic"] == "app.chronir.ios")
            #expect(apns.headers["apns-push-type"] == "alert")
            #expect(apns.headers["apns-priority"] == "10")
            let aps = apns.json?["aps"] as? [String: Any]
            let alert = aps?["alert"] as? [String: Any]
            #expect(alert?["title"] as? String == "Chronir: Change HVAC Filter")
            #expect(aps?["sound"] as? String == "default_alarm.caf")
            #expect(aps?["interruption-level"] as? String == "time-sensitive")
            #expect(apns.json?["type"] as? String == "alarm_fired")
            #expect(apns.json?["alarmId"] as? String == id)
            #expect(apns.json?["deepLink"] as? String == "chronir://alarm/\(id)")

            #expect(push.requests("oauth").count == 1)
            let fcm = try #require(push.requests("fcm").first)
            #expect(fcm.path == "/v1/projects/chronir-test/messages:send")
            let message = fcm.json?["message"] as? [String: Any]
            #expect(message?["token"] as? String == "fcm-ok")
            #expect((message?["notification"] as? [String: Any])?["title"] as? String == "Chronir: Change HVAC Filter")
            let android = message?["android"] as? [String: Any]
            #expect(android?["priority"] as? String == "high")
            #expect((android?["notification"] as? [String: Any])?["channel_id"] as? String == "cycle_alarm_channel")
            #expect((message?["data"] as? [String: Any])?["alarmId"] as? String == id)
            #expect((message?["data"] as? [String: Any])?["type"] as? String == "alarm_fired")

            let hook = try #require(push.requests("webhook").first)
            #expect(hook.status == 200, "the signature did not verify")
            #expect(hook.json?["type"] as? String == "alarm_fired")
            #expect(hook.headers["x-chronir-event"] == "alarm_fired")

            let inbox = try await s.request(.GET, "/v1/me/notifications", token: u.token)
            let items = try #require(inbox.json["notifications"]?.arrayValue)
            #expect(items.count == 1)
            #expect(items.first?["title"]?.stringValue == "Chronir: Change HVAC Filter")
            #expect(items.first?["data"]?["alarmId"]?.stringValue == id)
            let nid = try #require(items.first?["id"]?.intValue)
            let ack = try await s.request(.POST, "/v1/me/notifications/\(nid)/ack", token: u.token)
            #expect(ack.status == 200)
            #expect(ack.json["ackedAt"]?.stringValue != nil)
            let other = try await s.signup("Other")
            #expect(try await s.request(.POST, "/v1/me/notifications/\(nid)/ack", token: other.token).status == 404)

            #expect(await eventually { live.ids == [String(nid)] }, "live: \(live.ids)")
            #expect(live.events.withLock { $0.first?.event } == "alarm_fired")

            // Every event on the way matches its schema in proto/events.
            let types = try await s.checkPublishedEvents(["notifications"])
            #expect(types == [NotificationsEvents.notificationCreated.type])
        }
    }

    @Test("a completion of a shared alarm reaches every other member once, not the one who completed it; a repeat adds nothing")
    func completionFanOut() async throws {
        try await withSuite { s, _ in
            let owner = try await s.signup("Keeper")
            let ann = try await s.signup("Ann")
            let bob = try await s.signup("Bob")
            try await s.setTier(owner, "premium")
            let created = try await s.request(.POST, "/v1/alarms", token: owner.token, json: [
                "title": "Feed the cat", "schedule": scheduleJSON("annual", day: 1)])
            let id = try #require(created.json["id"]?.stringValue, "\(created.text)")
            try await s.share(id, owner: owner, with: [ann, bob])
            let occurrence = try #require(created.json["nextFireDate"]?.stringValue)
            // Alarms learns display names from the accounts stream; Ann signed up a moment ago.
            let known = try await eventually {
                try await s.inDatabase("alarms") {
                    try await $0.query("SELECT display_name FROM users WHERE user_id = \(ann.uid)").first(String.self) == "Ann"
                }
            }
            #expect(known, "alarms never learned Ann's display name")
            let done = try await s.request(.POST, "/v1/alarms/\(id)/completions", token: ann.token, json: ["status": "completed"])
            #expect(done.status == 201, "\(done.text)")
            func completions(_ u: TestUser) async -> [JSONValue] {
                let inbox = try? await s.request(.GET, "/v1/me/notifications", token: u.token)
                return (inbox?.json["notifications"]?.arrayValue ?? []).filter { $0["data"]?["type"]?.stringValue == "alarm_completed" }
            }
            let arrived = await eventually(timeout: .seconds(20)) {
                let toOwner = await completions(owner).count
                let toBob = await completions(bob).count
                return toOwner == 1 && toBob == 1
            }
            #expect(arrived, "the completion push did not reach the other members once")
            let pushed = await completions(bob).first
            #expect(pushed?["title"]?.stringValue == "✓ Feed the cat — Done")
            #expect(pushed?["body"]?.stringValue == "Marked complete by Ann")
            #expect(pushed?["data"]?["alarmId"]?.stringValue == id)
            // The same occurrence marked again: the first completion stands, nobody is told twice.
            let again = try await s.request(.POST, "/v1/alarms/\(id)/completions", token: bob.token,
                                            json: ["status": "completed", "scheduledDate": occurrence])
            #expect(again.json["completion"]?["userId"]?.stringValue == ann.uid, "\(again.text)")
            // Alarms → scheduler → notifications all caught up: a second push would be in by now.
            await s.settle()
            let toOwner = await completions(owner).count, toBob = await completions(bob).count, toAnn = await completions(ann).count
            #expect(toOwner == 1 && toBob == 1 && toAnn == 0, "owner \(toOwner), bob \(toBob), ann \(toAnn)")
        }
    }

    @Test("410 removes the token, 503 is retried and delivered once, 400 is not retried")
    func providerErrors() async throws {
        try await withSuite { s, push in
            let u = try await s.signup("Errors")
            push.script.withLock { $0 = ["ios-gone": [410], "ios-flaky": [503], "fcm-bad": [400]] }
            try await device(s, u, "gone", ["platform": "ios", "pushToken": "ios-gone"])
            try await device(s, u, "flaky", ["platform": "ios", "pushToken": "ios-flaky"])
            try await device(s, u, "bad", ["platform": "android", "pushToken": "fcm-bad"])
            try await s.waitForDevices(u, count: 3)
            _ = try await fireNow(s, u)
            #expect(await eventually(timeout: .seconds(20)) {
                push.requests("apns").filter { $0.path.hasSuffix("ios-flaky") }.map(\.status) == [503, 200]
            }, "\(push.requests("apns").map { "\($0.path) \($0.status)" })")
            #expect(push.requests("apns").filter { $0.path.hasSuffix("ios-gone") }.map(\.status) == [410])
            #expect(push.requests("fcm").map(\.status) == [400])
            let devices = try await s.inDatabase("notifications") {
                try await $0.query("SELECT device_id FROM devices WHERE user_id = \(u.uid) ORDER BY device_id").all(String.self)
            }
            #expect(devices == ["bad", "flaky"], "the unregistered token is still there")
            // The push server saw the 200 before notifications recorded it: wait for the record.
            var states: [String] = []
            #expect(await eventually(timeout: .seconds(10)) {
                states = (try? await s.inDatabase("notifications") {
                    try await $0.query("SELECT device_id || ':' || state || ':' || attempts FROM deliveries ORDER BY device_id").all(String.self)
                }) ?? []
                return states == ["bad:failed:1", "flaky:sent:2", "gone:unregistered:1"]
            }, "\(states)")
            // What `chronirctl notifications tail` shows.
            let attempts = try await s.rpc(.notifications, NotificationsMethods.Attempts.self, .init(after: 0, limit: 100)).attempts
            #expect(attempts.map { "\($0.deviceId):\($0.outcome):\($0.status)" }.sorted()
                    == ["bad:failed:400", "flaky:retry:503", "flaky:sent:200", "gone:unregistered:410"])

            // The next fire does not try the removed token again.
            _ = try await fireNow(s, u, title: "Second")
            #expect(await eventually(timeout: .seconds(20)) { push.requests("apns").filter { $0.path.hasSuffix("ios-flaky") }.count == 3 })
            // The second fire applied and every delivery of it finished: a push to the removed
            // token would have been made by now.
            await s.settle()
            #expect(push.requests("apns").filter { $0.path.hasSuffix("ios-gone") }.count == 1)
        }
    }

    @Test("the live stream resumes after a disconnect with Last-Event-ID: no gap, no duplicate")
    func resume() async throws {
        try await withSuite { s, push in
            let u = try await s.signup("Resumer")
            _ = try await s.setTier(u, "plus")
            let witness = try await liveWitness(s)
            defer { Task { await witness.live.close() } }
            let url = try await s.gatewayURL() + "/v1/me/events"
            let first = SSEClient(http: s.http, url: url, token: u.token)
            #expect(await eventually { first.connected.withLock { $0 } })
            _ = try await fireNow(s, u, title: "One")
            #expect(await eventually(timeout: .seconds(20)) { first.ids.count == 1 })
            await first.close()
            let seen = try #require(first.ids.last)
            _ = try await fireNow(s, u, title: "Two")
            _ = try await fireNow(s, u, title: "Three")
            #expect(await eventually(timeout: .seconds(20)) {
                let r = try? await s.request(.GET, "/v1/me/notifications", token: u.token)
                return r?.json["notifications"]?.arrayValue?.count == 3
            })
            let second = SSEClient(http: s.http, url: url, token: u.token, lastEventId: seen)
            defer { Task { await second.close() } }
            #expect(await eventually { second.ids.count == 2 }, "\(second.ids)")
            _ = try await fireNow(s, u, title: "Four")
            #expect(await eventually(timeout: .seconds(20)) { second.ids.count == 3 }, "\(second.ids)")
            // Everything published reached the gateway: a duplicate would be on the stream now.
            await s.settle()
            try await passed(witness, s)
            let titles = second.events.withLock { $0.compactMap { e in
                (try? JSONSerialization.jsonObject(with: Data(e.data.utf8)) as? [String: Any])?["title"] as? String
            } }
            #expect(titles == ["Chronir: Two", "Chronir: Three", "Chronir: Four"])
            #expect(Set(second.ids).count == second.ids.count)
            #expect(!second.ids.contains(seen))
        }
    }

    @Test("a restart of notifications in the middle of 1 000 fires loses none and duplicates none")
    func restartMidStream() async throws {
        try await withSuite { s, push in
            let u = try await s.signup("Busy")
            try await device(s, u, "hook", ["platform": "web", "webhookUrl": "\(push.baseURL)/hook/busy"])
            try await s.waitForDevices(u, count: 1)
            let start = Date().addingTimeInterval(1)
            try await s.inDatabase("scheduler") {
                try await SchedulerLoad(database: $0, partitions: 16).seed(
                    prefix: "busy", dues: (0..<1000).map { start.addingTimeInterval(Double($0) * 0.004) }, members: [u.uid])
            }
            #expect(await eventually(timeout: .seconds(30), every: .milliseconds(20)) { push.requests("webhook").count >= 200 })
            let notifications = try #require(s.running.withLock { $0.first { $0.name == "notifications" } })
            await notifications.stop()
            let atRestart = push.requests("webhook").count
            #expect(atRestart < 1000, "the restart came too late to test anything")
            try s.startNotifications(push)
            #expect(await eventually(timeout: .seconds(60), every: .milliseconds(100)) { push.requests("webhook").count >= 1000 },
                    "\(push.requests("webhook").count) delivered")
            // No timer left due, notifications' checkpoint at the scheduler's head, no delivery
            // pending: a duplicate push would have been made by now.
            await s.settle(timeout: .seconds(60))
            let deliveries = push.requests("webhook").compactMap { $0.headers["x-chronir-delivery"] }
            #expect(deliveries.count == 1000, "restarted after \(atRestart)")
            #expect(Set(deliveries).count == deliveries.count, "duplicates")
            let inbox = try await s.inDatabase("notifications") {
                try await $0.query("SELECT count(*)::int FROM inbox WHERE user_id = \(u.uid)").first(Int.self)
            }
            #expect(inbox == 1000)
        }
    }

    @Test("`chronirctl notifications tail` says when there is no delivery attempt yet, and waits when it follows")
    func tailWhenEmpty() async throws {
        try await withSuite { s, _ in
            let once = try TestProcess("chronirctl", ["notifications", "tail", "--no-follow"], environment: s.environment(for: "chronirctl"))
            #expect(await once.waitForExit() == 0, "\(once.output)")
            #expect(once.output.contains("no delivery attempts yet"), "\(once.output)")
            let follow = try TestProcess("chronirctl", ["notifications", "tail"], environment: s.environment(for: "chronirctl"))
            #expect(await follow.waitForOutput("no delivery attempts yet; waiting for the first one"), "\(follow.output)")
            #expect(follow.exitStatus == nil, "it stopped instead of following: \(follow.output)")
            await follow.terminate()
        }
    }
}
