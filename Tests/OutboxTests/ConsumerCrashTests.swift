import BillingService
import Contracts
import Foundation
import Messaging
import PostgresNIO
import Support
@testable import SuiteSupport
import Testing

/// Every service that consumes a stream, run as its own process and killed with SIGKILL after
/// it applied events and before their checkpoint was written (the failpoint
/// `CHRONIR_FAILPOINT_KILL_BEFORE_CHECKPOINT`), then restarted: each event is applied once.
@Suite("Consumers killed before their checkpoint", .serialized)
struct ConsumerCrashTests {
    /// Which stream each consuming service dies on, at its first application of it.
    static let armed = ["scheduler": "alarms", "alarms": "invitations", "invitations": "alarms",
                        "notifications": "scheduler", "accounts": "billing", "billing": "accounts"]

    /// The consuming services as processes, each restarted once after its crash.
    final class Consumers: @unchecked Sendable {
        let suite: TestSuite
        let push: FakePushServer
        let appleRoot: String
        var processes: [String: TestProcess] = [:]

        init(suite: TestSuite, push: FakePushServer, appleRoot: String) throws {
            self.suite = suite
            self.push = push
            self.appleRoot = appleRoot
            for (name, stream) in ConsumerCrashTests.armed {
                processes[name] = try start(name, failpoint: "\(stream):1")
            }
        }

        func start(_ name: String, failpoint: String?) throws -> TestProcess {
            var extra = ["CHRONIR_LOG_LEVEL": "info"]
            if name == "notifications" { extra.merge(push.environment.merging(["CHRONIR_DELIVERY_POLL": "50ms"]) { $1 }) { $1 } }
            if name == "scheduler" { extra["CHRONIR_SCHEDULER_PARTITIONS"] = "16" }
            if name == "billing" { extra["CHRONIR_APPLE_ROOT_CA_FILE"] = appleRoot }
            if let failpoint { extra["CHRONIR_FAILPOINT_KILL_BEFORE_CHECKPOINT"] = failpoint }
            return try TestProcess(name, environment: suite.environment(for: name, extra: extra),
                                   label: "\(name)-\(failpoint == nil ? "restarted" : "armed")")
        }

        /// Waits for `name` to die at its failpoint, then starts it again, unarmed.
        func crashedAndRestarted(_ name: String) async throws {
            let p = try #require(processes[name])
            let status = await p.waitForExit(timeout: .seconds(30))
            #expect(status == SIGKILL, "\(name) did not die at its failpoint: \(p.output.suffix(3000))")
            #expect(p.output.contains("failpoint: SIGKILL after applied \(ConsumerCrashTests.armed[name]!) events"), "\(p.output.suffix(2000))")
            processes[name] = try start(name, failpoint: nil)
        }

        /// Stops every process gracefully; each must exit 0.
        func stop() async {
            for (name, p) in processes {
                let status = await p.terminate()
                #expect(status == 0, "\(name) exited \(status): \(p.output.suffix(2000))")
            }
        }
    }

    func count(_ s: TestSuite, _ schema: String, _ sql: String) async -> Int? {
        try? await s.inDatabase(schema) { db in
            try await db.query(PostgresQuery(unsafeSQL: sql)).first(Int.self)
        }
    }

    @Test("scheduler, alarms, invitations, notifications, accounts and billing each killed between applying and checkpointing: restarted, every event applied once")
    func everyConsumer() async throws {
        let signer = try StoreSigner()
        let root = try signer.rootFile()
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        try await withTestSuite(label: "crash", start: { s in
            try s.startGateway()
        }) { s in
            let consumers = try Consumers(suite: s, push: push, appleRoot: root)
            var signedUp: TestUser?
            #expect(await eventually(timeout: .seconds(60)) { signedUp = try? await s.signup("Owner"); return signedUp != nil })
            let owner = try #require(signedUp)
            let friend = try await s.signup("Friend")
            #expect(await eventually(timeout: .seconds(20)) { (try? await s.setTier(owner, "premium")) != nil })

            // Scheduler, on the alarms stream: the alarms' states, applied once after the crash.
            var ids: [String] = []
            for title in ["Fire me", "Share me", "Delete me"] {
                let r = try await s.request(.POST, "/v1/alarms", token: owner.token, json: ["title": title, "schedule": scheduleJSON("annual", day: 1)])
                ids.append(try #require(r.json["id"]?.stringValue, "\(r.text)"))
            }
            let (fire, share, delete) = (ids[0], ids[1], ids[2])
            try await consumers.crashedAndRestarted("scheduler")
            let list = ids.map { "'\($0)'" }.joined(separator: ",")
            #expect(await eventually(timeout: .seconds(30)) {
                await count(s, "scheduler", "SELECT count(*)::int FROM alarms WHERE alarm_id IN (\(list))") == 3
            })
            #expect(await count(s, "scheduler", "SELECT count(*)::int FROM timers WHERE kind = 'fire' AND alarm_id IN (\(list))") == 3)

            // Invitations, on the alarms stream: it dies applying the first alarms it counts the
            // members of (issue 57: alarm_shares), before its checkpoint; restarted, it goes on.
            try await consumers.crashedAndRestarted("invitations")

            // Alarms, on the invitations stream: an accepted invitation shares the alarm once.
            let inv = try await s.request(.POST, "/v1/invitations", token: owner.token,
                                          json: ["type": "alarm", "referenceId": share, "inviteeEmail": friend.email])
            let code = try #require(inv.json["id"]?.stringValue, "\(inv.text)")
            let accepted = try await s.request(.POST, "/v1/invitations/\(code)/accept", token: friend.token)
            #expect(accepted.status == 200, "\(accepted.status) \(accepted.text)")
            try await consumers.crashedAndRestarted("alarms")
            #expect(await eventually(timeout: .seconds(30)) {
                (try? await s.request(.GET, "/v1/alarms/\(share)", token: friend.token))?.status == 200
            }, "the accepted invitation did not share the alarm after the restart")
            let shared = try await s.request(.GET, "/v1/alarms/\(share)", token: owner.token)
            #expect(shared.json["sharedWith"]?.arrayValue?.compactMap(\.stringValue) == [friend.uid], "\(shared.text)")

            // And deleting an alarm revokes its pending invitation.
            let pending = try await s.request(.POST, "/v1/invitations", token: owner.token, json: ["type": "alarm", "referenceId": delete])
            let pendingCode = try #require(pending.json["id"]?.stringValue, "\(pending.text)")
            // The restarted invitations counted the share the accept made, once.
            #expect(await eventually(timeout: .seconds(30)) {
                await count(s, "invitations", "SELECT shared FROM alarm_shares WHERE alarm_id = '\(share)'") == 1
            }, "invitations did not count the alarm's member after its restart")
            #expect(try await s.request(.DELETE, "/v1/alarms/\(delete)", token: owner.token).status == 204)
            #expect(await eventually(timeout: .seconds(30)) {
                (try? await s.request(.GET, "/v1/invitations/\(pendingCode)", token: friend.token))?.json["status"]?.stringValue == "revoked"
            }, "the deleted alarm's invitation was not revoked after the restart")
            #expect(await eventually(timeout: .seconds(10)) {
                await count(s, "scheduler", "SELECT count(*)::int FROM timers WHERE alarm_id = '\(delete)'") == 0
            })

            // Notifications, on the scheduler stream: a fire reaches the inbox and the webhook once.
            let hook = try await s.request(.PUT, "/v1/me/devices/hook", token: owner.token,
                                           json: ["platform": "web", "webhookUrl": "\(push.baseURL)/hook/owner"])
            #expect(hook.status == 200 || hook.status == 201, "\(hook.text)")
            #expect(await eventually(timeout: .seconds(10)) {
                await count(s, "notifications", "SELECT count(*)::int FROM devices WHERE user_id = '\(owner.uid)'") == 1
            })
            _ = try await s.dueIn(fire, seconds: 2)
            try await consumers.crashedAndRestarted("notifications")
            #expect(await eventually(timeout: .seconds(30)) { push.requests("webhook").count >= 1 }, "the fire was not pushed after the restart")
            #expect(await eventually(timeout: .seconds(10)) {
                (try? await s.request(.GET, "/v1/alarms/\(fire)", token: owner.token))?.json["lastFiredDate"]?.stringValue != nil
            })
            // Anything doubled would be here once notifications reached the scheduler's head and
            // sent every pending push.
            #expect(await eventually(timeout: .seconds(30)) {
                let head = await count(s, "scheduler", "SELECT coalesce(max(last_seq), 0)::int FROM outbox_streams WHERE stream = 'scheduler'") ?? -1
                let at = await count(s, "notifications", "SELECT coalesce(max(seq), 0)::int FROM consumer_checkpoints WHERE stream = 'scheduler'") ?? -2
                let pending = await count(s, "notifications", "SELECT count(*)::int FROM deliveries WHERE state = 'pending'") ?? -1
                return at == head && pending == 0
            }, "notifications did not catch up with the scheduler after its restart")
            #expect(await count(s, "notifications", "SELECT count(*)::int FROM inbox WHERE user_id = '\(owner.uid)' AND data->>'alarmId' = '\(fire)'") == 1)
            #expect(push.requests("webhook").count == 1)
            #expect(await count(s, "scheduler", "SELECT count(*)::int FROM fires WHERE alarm_id = '\(fire)'") == 1)

            // Accounts, on the billing stream: a purchase makes the buyer Plus.
            let txn = TestTransaction(original: "2000001", productId: "com.chronir.plus.monthly", expires: Date().addingTimeInterval(3600))
            let bought = try await s.request(.POST, "/v1/subscriptions/apple", token: friend.token, json: ["signedTransaction": try await signer.sign(txn)])
            #expect(bought.status == 200, "\(bought.text)")
            try await consumers.crashedAndRestarted("accounts")
            #expect(await eventually(timeout: .seconds(30)) {
                (try? await s.request(.GET, "/v1/me", token: friend.token))?.json["tier"]?.stringValue == "plus"
            }, "the entitlement did not reach the profile after the restart")

            // Billing, on the accounts stream: a deleted buyer's purchase is kept for the books
            // under another name, and their entitlement goes, once.
            let buyer = try await s.signup("Buyer")
            let receipt = TestTransaction(original: "2000002", productId: "com.chronir.plus.monthly", expires: Date().addingTimeInterval(3600))
            let paid = try await s.request(.POST, "/v1/subscriptions/apple", token: buyer.token, json: ["signedTransaction": try await signer.sign(receipt)])
            #expect(paid.status == 200, "\(paid.text)")
            let purchases = await count(s, "billing", "SELECT count(*)::int FROM subscriptions")
            #expect(try await s.request(.DELETE, "/v1/me", token: buyer.token).status == 204)
            try await consumers.crashedAndRestarted("billing")
            #expect(await eventually(timeout: .seconds(30)) {
                await count(s, "billing", "SELECT count(*)::int FROM subscriptions WHERE user_id = '\(buyer.uid)'") == 0
            }, "the deleted buyer's purchase still names them after the restart")
            #expect(await count(s, "billing", "SELECT count(*)::int FROM subscriptions") == purchases)
            #expect(await count(s, "billing", "SELECT count(*)::int FROM subscriptions WHERE user_id LIKE 'deleted-%'") == 1)
            #expect(await count(s, "billing", "SELECT count(*)::int FROM entitlements WHERE user_id = '\(buyer.uid)'") == 0)

            // Every consumer's checkpoints reached its producers' heads: nothing left behind.
            #expect(await eventually(timeout: .seconds(15)) {
                var behind = 0
                for (consumer, stream) in Self.armed {
                    let head = await count(s, stream, "SELECT coalesce(max(last_seq), 0)::int FROM outbox_streams WHERE stream = '\(stream)'") ?? -1
                    let at = await count(s, consumer, "SELECT coalesce(max(seq), 0)::int FROM consumer_checkpoints WHERE stream = '\(stream)'") ?? -2
                    if at < head { behind += 1 }
                }
                return behind == 0
            }, "a consumer's checkpoint stayed behind its producer")
            for consumer in Self.armed.keys {
                #expect(await count(s, consumer, "SELECT count(*)::int FROM consumer_dead_letters") == 0, "\(consumer) dead-lettered events")
            }
            await consumers.stop()
        }
    }
}
