import BillingService
import Contracts
import Foundation
import InvitationsService
import Messaging
import Support
@testable import SuiteSupport
import Testing

/// Store purchases, notifications and entitlements through the gateway, with a local
/// certificate chain in place of Apple's and a local server speaking the Play Developer API.
@Suite("Billing")
struct BillingTests {
    func withSuite(_ signer: StoreSigner, push: FakePushServer? = nil, extra: [String: String] = [:],
                   _ body: (TestSuite) async throws -> Void) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("billing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let root = dir.appendingPathComponent("root.pem").path
        try signer.rootPEM.write(toFile: root, atomically: true, encoding: .utf8)
        var env = ["CHRONIR_APPLE_ROOT_CA_FILE": root, "CHRONIR_APPLE_GRACE": "3s", "CHRONIR_GOOGLE_GRACE": "3s",
                   "CHRONIR_ENTITLEMENT_SWEEP": "300ms", "CHRONIR_PLAY_PUSH_TOKEN": "push-secret",
                   "CHRONIR_CHARITY_NAME": "Chronir Test Fund", "CHRONIR_CHARITY_URL": "https://charity.example.org"]
        if let push {
            env["CHRONIR_PLAY_CREDENTIALS_FILE"] = push.fcmCredentialsFile
            env["CHRONIR_PLAY_API_URL"] = push.baseURL
            env["CHRONIR_PUSH_CA_FILE"] = push.certFile
        }
        env.merge(extra) { $1 }
        try await withTestSuite(label: "billing", start: { s in
            try s.startCore()
            try s.start("billing", migrations: BillingService.migrations, extra: env, build: BillingService.build)
            try s.start("invitations", migrations: InvitationsService.migrations, build: InvitationsService.build)
        }, body)
    }

    func alarm(_ s: TestSuite, _ u: TestUser, _ title: String = "Rent") async throws -> HTTPResult {
        try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": title, "schedule": scheduleJSON()])
    }

    func tier(_ s: TestSuite, _ u: TestUser) async throws -> String? {
        try await s.request(.GET, "/v1/entitlements", token: u.token).json["tier"]?.stringValue
    }

    @Test("a valid signed transaction upgrades to Plus and lifts the 2-alarm limit; forgeries and bad chains change nothing")
    func appleTransactions() async throws {
        let signer = try StoreSigner()
        try await withSuite(signer) { s in
            let u = try await s.signup("Buyer")
            #expect(try await alarm(s, u).status == 201)
            #expect(try await alarm(s, u).status == 201)
            #expect(try await alarm(s, u).code == "CA001")
            let products = try await s.request(.GET, "/v1/products")
            #expect(products.json["products"]?.arrayValue?.count == 4)
            #expect(products.json["products"]?.arrayValue?.last?["annualSavingsPercent"]?.intValue == 37)

            // Refused: each with a clear error, nothing recorded.
            let later = Date().addingTimeInterval(3600)
            let good = TestTransaction(original: "1000001", productId: "com.chronir.plus.monthly", expires: later)
            let forged = try await signer.sign(good, key: .init())
            let expiredLeaf = try await StoreSigner(leafExpired: true).sign(good)
            let untrusted = try await StoreSigner(rootName: "Somebody Else").sign(good)
            let wrongBundle = try await signer.sign(TestTransaction(original: "1000001", productId: "com.chronir.plus.monthly", expires: later,
                                                                    bundleId: "com.example.other"))
            let unknownProduct = try await signer.sign(TestTransaction(original: "1000001", productId: "com.chronir.gold", expires: later))
            for (name, jws) in [("forged signature", forged), ("expired certificate", expiredLeaf), ("untrusted root", untrusted),
                                ("wrong bundle id", wrongBundle), ("unknown product", unknownProduct), ("not a JWS", "abc.def")] {
                let r = try await s.request(.POST, "/v1/subscriptions/apple", token: u.token, json: ["signedTransaction": jws])
                #expect(r.status == 400, "\(name): \(r.status) \(r.text)")
                #expect(r.code == "CA027", "\(name): \(r.text)")
            }
            #expect(try await tier(s, u) == "free")
            let none = try await s.inDatabase("billing") {
                try await $0.query("SELECT count(*)::int FROM subscriptions").first(Int.self)
            }
            #expect(none == 0)

            let ok = try await s.request(.POST, "/v1/subscriptions/apple", token: u.token, json: ["signedTransaction": try await signer.sign(good)])
            #expect(ok.status == 200, "\(ok.text)")
            #expect(ok.json["tier"]?.stringValue == "plus")
            #expect(ok.json["state"]?.stringValue == "active")
            // The alarms service and the profile follow the entitlement event.
            #expect(await eventually { (try? await alarm(s, u, "Third"))?.status == 201 }, "the limit was not lifted")
            #expect(await eventually { (try? await s.request(.GET, "/v1/me", token: u.token))?.json["tier"]?.stringValue == "plus" })
            // Every event on the way matches its schema in proto/events.
            let types = try await s.checkPublishedEvents(["billing"])
            #expect(types == [BillingEvents.entitlementChanged.type])
        }
    }

    @Test("App Store notifications: unsigned or malformed → 400; a replay changes nothing; an old one arriving late is ignored")
    func appleNotifications() async throws {
        let signer = try StoreSigner()
        try await withSuite(signer) { s in
            let u = try await s.signup("Subscriber")
            let start = Date()
            let first = TestTransaction(original: "2000001", productId: "com.chronir.premium.monthly", expires: start.addingTimeInterval(3600), signed: start)
            #expect(try await s.request(.POST, "/v1/subscriptions/apple", token: u.token, json: ["signedTransaction": try await signer.sign(first)]).status == 200)
            for body: [String: Any] in [[:], ["signedPayload": 42], ["signedPayload": "a.b.c"],
                                        ["signedPayload": try await signer.sign(first, key: .init())]] {
                let r = try await s.request(.POST, "/v1/webhooks/apple", json: body)
                #expect(r.status == 400, "\(body): \(r.text)")
            }
            #expect(try await s.request(.POST, "/v1/webhooks/apple", body: "not json").status == 400)

            // A renewal.
            let renewed = TestTransaction(original: "2000001", productId: "com.chronir.premium.monthly", expires: start.addingTimeInterval(7200),
                                          signed: start.addingTimeInterval(5))
            let renewal = try await signer.sign(TestNotification(type: "DID_RENEW", transaction: try await signer.sign(renewed),
                                                                 signed: start.addingTimeInterval(5)))
            let applied = try await s.request(.POST, "/v1/webhooks/apple", json: ["signedPayload": renewal])
            #expect(applied.json["result"]?.stringValue == "applied", "\(applied.text)")
            let again = try await s.request(.POST, "/v1/webhooks/apple", json: ["signedPayload": renewal])
            #expect(again.json["result"]?.stringValue == "duplicate")
            // An EXPIRED notification signed before the renewal arrives late: ignored.
            let old = try await signer.sign(TestNotification(type: "EXPIRED", subtype: "VOLUNTARY", transaction: try await signer.sign(first),
                                                             signed: start.addingTimeInterval(2)))
            #expect(try await s.request(.POST, "/v1/webhooks/apple", json: ["signedPayload": old]).json["result"]?.stringValue == "stale")
            let e = try await s.request(.GET, "/v1/entitlements", token: u.token)
            #expect(e.json["tier"]?.stringValue == "premium")
            #expect(e.json["expiresAt"]?.stringValue.flatMap(ISOTime.parse).map { abs($0.timeIntervalSince(start.addingTimeInterval(7200))) < 1 } == true)
            // A refund takes it away at once.
            let refund = try await signer.sign(TestNotification(type: "REFUND", transaction: try await signer.sign(renewed),
                                                                signed: start.addingTimeInterval(10)))
            #expect(try await s.request(.POST, "/v1/webhooks/apple", json: ["signedPayload": refund]).json["result"]?.stringValue == "applied")
            #expect(try await tier(s, u) == "free")
        }
    }

    @Test("lifecycle: Premium → expiry → grace → Free deactivates alarms beyond 2 (kept), sharing stops; renewing restores access")
    func lifecycle() async throws {
        let signer = try StoreSigner()
        try await withSuite(signer) { s in
            let u = try await s.signup("Lapsing")
            let friend = try await s.signup("Friend")
            let start = Date()
            let tx = TestTransaction(original: "3000001", productId: "com.chronir.premium.monthly", expires: start.addingTimeInterval(2), signed: start)
            #expect(try await s.request(.POST, "/v1/subscriptions/apple", token: u.token, json: ["signedTransaction": try await signer.sign(tx)])
                .json["tier"]?.stringValue == "premium")
            var ids: [String] = []
            #expect(await eventually {
                guard let r = try? await alarm(s, u, "A\(ids.count)"), r.status == 201, let id = r.json["id"]?.stringValue else { return false }
                ids.append(id)
                return ids.count == 3
            })
            #expect(try await s.request(.POST, "/v1/invitations", token: u.token, json: ["type": "alarm", "referenceId": ids[0]]).status == 201)

            // Past the expiry: in grace, still Premium.
            #expect(await eventually(timeout: .seconds(5)) {
                (try? await s.request(.GET, "/v1/entitlements", token: u.token))?.json["state"]?.stringValue == "grace"
            })
            #expect(try await tier(s, u) == "premium")
            // Grace ends: Free. Alarms beyond 2 deactivated, none deleted; no new sharing.
            #expect(await eventually(timeout: .seconds(10)) { (try? await tier(s, u)) == "free" })
            #expect(await eventually {
                let page = try? await s.request(.GET, "/v1/alarms", token: u.token)
                let items = page?.json["items"]?.arrayValue ?? page?.json["alarms"]?.arrayValue ?? []
                return items.count == 3 && items.filter { $0["isActive"] == .bool(true) }.count == 2
            }, "alarms beyond 2 were not deactivated (or were deleted)")
            #expect(await eventually {
                (try? await s.request(.POST, "/v1/invitations", token: u.token, json: ["type": "alarm", "referenceId": ids[0]]))?.code == "CA002"
            })
            _ = friend
            // What the lapsed tier gave is refused as such (CA013), not as an offer to upgrade.
            let lapsed = try await s.request(.POST, "/v1/alarms", token: u.token, json: [
                "title": "Tea", "schedule": scheduleJSON(), "soundId": "birdsong", "isActive": false])
            #expect(lapsed.status == 403 && lapsed.code == "CA013", "\(lapsed.text)")
            #expect(lapsed.json["message"]?.stringValue?.contains("Premium subscription expired") == true, "\(lapsed.text)")

            // Renewing restores access; the deactivated alarm can be turned on again.
            let renewed = TestTransaction(original: "3000001", productId: "com.chronir.premium.monthly", expires: Date().addingTimeInterval(3600),
                                          signed: Date())
            #expect(try await s.request(.POST, "/v1/subscriptions/apple", token: u.token, json: ["signedTransaction": try await signer.sign(renewed)])
                .json["tier"]?.stringValue == "premium")
            let inactive = try await s.request(.GET, "/v1/alarms", token: u.token)
            let off = (inactive.json["items"]?.arrayValue ?? inactive.json["alarms"]?.arrayValue ?? []).first { $0["isActive"] == .bool(false) }
            let offId = try #require(off?["id"]?.stringValue)
            #expect(await eventually {
                (try? await s.request(.PATCH, "/v1/alarms/\(offId)", token: u.token, json: ["isActive": true]))?.status == 200
            })
            #expect(try await s.request(.PATCH, "/v1/alarms/\(offId)", token: u.token, json: ["soundId": "birdsong"]).status == 200,
                    "the renewed tier chooses any sound again")
        }
    }

    @Test("Google Play: a purchase verified with the Play API; RTDN pushes need the token, are idempotent, and move the state")
    func google() async throws {
        let signer = try StoreSigner()
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        let later = ISOTime.format(Date().addingTimeInterval(3600))
        try push.setPlayPurchase("tok-1", ["subscriptionState": "SUBSCRIPTION_STATE_ACTIVE", "startTime": ISOTime.format(Date()),
                                           "lineItems": [["productId": "chronir_premium_monthly", "expiryTime": later,
                                                          "autoRenewingPlan": ["autoRenewEnabled": true]]]])
        try await withSuite(signer, push: push) { s in
            let u = try await s.signup("Android")
            let unknown = try await s.request(.POST, "/v1/subscriptions/google", token: u.token,
                                              json: ["productId": "chronir_premium_monthly", "purchaseToken": "nope"])
            #expect(unknown.status == 400, "\(unknown.text)")
            let ok = try await s.request(.POST, "/v1/subscriptions/google", token: u.token,
                                         json: ["productId": "chronir_premium_monthly", "purchaseToken": "tok-1"])
            #expect(ok.json["tier"]?.stringValue == "premium", "\(ok.text)")

            try push.setPlayPurchase("tok-1", ["subscriptionState": "SUBSCRIPTION_STATE_EXPIRED",
                                               "lineItems": [["productId": "chronir_premium_monthly",
                                                              "expiryTime": ISOTime.format(Date().addingTimeInterval(-60))]]])
            let rtdn: [String: Any] = ["version": "1.0", "packageName": "com.chronir.app", "eventTimeMillis": String(Int64(Date().timeIntervalSince1970 * 1000) + 1000),
                                       "subscriptionNotification": ["version": "1.0", "notificationType": 13, "purchaseToken": "tok-1",
                                                                    "subscriptionId": "chronir_premium_monthly"]]
            let data = try JSONSerialization.data(withJSONObject: rtdn).base64EncodedString()
            let message: [String: Any] = ["message": ["data": data, "messageId": "m-1", "publishTime": ISOTime.format(Date())],
                                          "subscription": "projects/chronir/subscriptions/play"]
            #expect(try await s.request(.POST, "/v1/webhooks/google?token=wrong", json: message).status == 401)
            #expect(try await s.request(.POST, "/v1/webhooks/google?token=push-secret", json: ["message": ["data": "%%%"]]).status == 400)
            let applied = try await s.request(.POST, "/v1/webhooks/google?token=push-secret", json: message)
            #expect(applied.json["result"]?.stringValue == "applied", "\(applied.text)")
            #expect(try await s.request(.POST, "/v1/webhooks/google?token=push-secret", json: message).json["result"]?.stringValue == "duplicate")
            #expect(try await tier(s, u) == "free")
        }
    }

    @Test("accountability snoozes: escalating prices paid by verified consumables, once per transaction, at most 5, with totals")
    func snoozeLedger() async throws {
        let signer = try StoreSigner()
        try await withSuite(signer) { s in
            let u = try await s.signup("Sleepy")
            let occurrence = "2026-11-23T07:00:00Z"
            func buy(_ product: String, id: String = UUID().uuidString) async throws -> HTTPResult {
                var t = TestTransaction(original: id, productId: product, expires: Date())
                t.transactionId = id
                return try await s.request(.POST, "/v1/me/snooze-ledger", token: u.token,
                                           json: ["alarmId": "a1", "occurrenceAt": occurrence, "signedTransaction": try await signer.sign(t)])
            }
            let first = try await buy("com.chronir.snooze.1", id: "t-1")
            #expect(first.status == 201, "\(first.text)")
            #expect(first.json["amountCents"]?.intValue == 99)
            #expect(try await buy("com.chronir.snooze.1", id: "t-1").json["sequence"]?.intValue == 1, "a replayed transaction counts once")
            let wrong = try await buy("com.chronir.snooze.1")
            #expect(wrong.status == 400)
            #expect(wrong.json["message"]?.stringValue?.contains("$1.99") == true, "\(wrong.text)")
            for n in 2...5 { #expect(try await buy("com.chronir.snooze.\(n)").json["amountCents"]?.intValue == n * 100 - 1) }
            #expect(try await buy("com.chronir.snooze.5").code == "CA026")
            let forged = try await s.request(.POST, "/v1/me/snooze-ledger", token: u.token, json: [
                "alarmId": "a1", "occurrenceAt": occurrence,
                "signedTransaction": try await signer.sign(TestTransaction(original: "x", productId: "com.chronir.snooze.1", expires: Date()), key: .init())])
            #expect(forged.code == "CA027")
            let ledger = try await s.request(.GET, "/v1/me/snooze-ledger", token: u.token)
            #expect(ledger.json["totalSnoozes"]?.intValue == 5)
            #expect(ledger.json["totalCents"]?.intValue == 99 + 199 + 299 + 399 + 499)
            #expect(ledger.json["currentStreakDays"]?.intValue == 0)
        }
    }

    @Test("paid snoozes on Android: a Play purchase of the snooze's consumable, verified with the Play API, recorded once and consumed; weekly and monthly totals and the charity")
    func playSnoozes() async throws {
        let signer = try StoreSigner()
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        push.setPlayProduct("chronir_snooze_1", token: "p-1", .init(orderId: "GPA.1111"))
        push.setPlayProduct("chronir_snooze_2", token: "p-2", .init(orderId: "GPA.2222"))
        push.setPlayProduct("chronir_snooze_2", token: "p-used", .init(consumptionState: 1, orderId: "GPA.3333"))
        push.setPlayProduct("chronir_snooze_2", token: "p-pending", .init(purchaseState: 2, orderId: "GPA.4444"))
        try await withSuite(signer, push: push) { s in
            let u = try await s.signup("DroidSleeper")
            let occurrence = "2026-11-23T07:00:00Z"
            func pay(_ token: String) async throws -> HTTPResult {
                try await s.request(.POST, "/v1/me/snooze-ledger", token: u.token, json: ["alarmId": "a1", "occurrenceAt": occurrence, "purchaseToken": token])
            }
            let first = try await pay("p-1")
            #expect(first.status == 201, "\(first.text)")
            #expect(first.json["productId"]?.stringValue == "chronir_snooze_1" && first.json["amountCents"]?.intValue == 99, "\(first.text)")
            #expect(push.requests("play-consume").map(\.status) == [204], "the purchase was consumed once")
            let again = try await pay("p-1")
            #expect(again.json["sequence"]?.intValue == 1 && again.json["transactionId"] == first.json["transactionId"], "a repeat counts once: \(again.text)")
            #expect(push.requests("play-consume").count == 1, "a recorded, consumed purchase is not consumed again")
            // Refusals: a token Google does not know, a purchase used elsewhere or still pending, both proofs at once.
            #expect(try await pay("nope").code == "CA027")
            let used = try await pay("p-used")
            #expect(used.status == 400 && used.json["message"]?.stringValue?.contains("already used") == true, "\(used.text)")
            let pending = try await pay("p-pending")
            #expect(pending.status == 400 && pending.json["message"]?.stringValue?.contains("pending") == true, "\(pending.text)")
            let both = try await s.request(.POST, "/v1/me/snooze-ledger", token: u.token,
                                           json: ["alarmId": "a1", "occurrenceAt": occurrence, "purchaseToken": "p-2", "signedTransaction": "x"])
            #expect(both.status == 400, "\(both.text)")
            let second = try await pay("p-2")
            #expect(second.json["sequence"]?.intValue == 2 && second.json["amountCents"]?.intValue == 199, "\(second.text)")
            let ledger = try await s.request(.GET, "/v1/me/snooze-ledger", token: u.token)
            #expect(ledger.json["totalSnoozes"]?.intValue == 2)
            #expect(ledger.json["currentWeekSnoozes"]?.intValue == 2 && ledger.json["currentWeekCents"]?.intValue == 298, "\(ledger.text)")
            #expect(ledger.json["currentMonthSnoozes"]?.intValue == 2 && ledger.json["currentMonthCents"]?.intValue == 298, "\(ledger.text)")
            #expect(ledger.json["charity"]?["name"]?.stringValue == "Chronir Test Fund", "\(ledger.text)")
            #expect(ledger.json["charity"]?["websiteURL"]?.stringValue == "https://charity.example.org")
        }
    }

    @Test("an alarm's accountability policy: free snoozes first, then each paid (402 names the consumable), 5 in all")
    func accountabilityPolicy() async throws {
        let signer = try StoreSigner()
        try await withSuite(signer) { s in
            let u = try await s.signup("Owner")
            let other = try await s.signup("Other")
            let created = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "Gym", "schedule": scheduleJSON()])
            let id = try #require(created.json["id"]?.stringValue)
            #expect(try await s.request(.PUT, "/v1/alarms/\(id)/snooze-policy", token: other.token, json: ["enabled": true, "freeSnoozes": 1]).status == 404)
            #expect(try await s.request(.PUT, "/v1/alarms/\(id)/snooze-policy", token: u.token, json: ["enabled": true, "freeSnoozes": 9]).status == 400)
            #expect(try await s.request(.PUT, "/v1/alarms/\(id)/snooze-policy", token: u.token, json: ["enabled": true, "freeSnoozes": 1]).status == 200)
            // The occurrence is due (as if it had fired a minute ago).
            try await s.inDatabase("alarms") {
                try await $0.query("UPDATE alarms SET next_fire_date = date_trunc('second', now()) - interval '1 minute' WHERE id = \(id)")
            }
            let occurrence = try #require(try await s.request(.GET, "/v1/alarms/\(id)", token: u.token).json["nextFireDate"]?.stringValue)
            #expect(try await s.request(.POST, "/v1/alarms/\(id)/snooze", token: u.token, json: ["minutes": 10]).status == 200, "the free one")
            for n in 1...4 {
                let refused = try await s.request(.POST, "/v1/alarms/\(id)/snooze", token: u.token, json: ["minutes": 10])
                #expect(refused.status == 402, "\(refused.text)")
                #expect(refused.code == "CA029")
                #expect(refused.json["message"]?.stringValue?.contains("com.chronir.snooze.\(n)") == true, "\(refused.text)")
                var t = TestTransaction(original: "s-\(n)", productId: "com.chronir.snooze.\(n)", expires: Date())
                t.transactionId = "s-\(n)"
                let paid = try await s.request(.POST, "/v1/me/snooze-ledger", token: u.token,
                                               json: ["alarmId": id, "occurrenceAt": occurrence, "signedTransaction": try await signer.sign(t)])
                #expect(paid.status == 201, "\(paid.text)")
                let ok = try await s.request(.POST, "/v1/alarms/\(id)/snooze", token: u.token, json: ["minutes": 10])
                #expect(ok.status == 200, "\(ok.text)")
                #expect(ok.json["snoozeCount"]?.intValue == n + 1)
            }
            #expect(try await s.request(.POST, "/v1/alarms/\(id)/snooze", token: u.token, json: ["minutes": 10]).code == "CA026")
            let ledger = try await s.request(.GET, "/v1/me/snooze-ledger", token: u.token)
            #expect(ledger.json["totalCents"]?.intValue == 99 + 199 + 299 + 399)
        }
    }
}
