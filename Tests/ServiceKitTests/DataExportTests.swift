import AccountsService
import AlarmsService
import BillingService
import Foundation
import InvitationsService
import Messaging
import NotificationsService
import Support
@testable import SuiteSupport
import Testing

/// `GET /v1/me/export`: everything an account owns, from every service, in one JSON document.
@Suite("Data export")
struct DataExportTests {
    @Test("a populated account's export holds each kind of its data over several pages; a stranger's holds none of it; exports are rate-limited")
    func exportHoldsEverything() async throws {
        let signer = try StoreSigner()
        let root = try signer.rootFile()
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        // Pages of 2 rows: every section with more than two rows takes several requests.
        let paging = ["CHRONIR_EXPORT_PAGE_SIZE": "2"]
        try await withTestSuite(label: "export", start: { s in
            try s.start("accounts", migrations: AccountsService.migrations, extra: paging, build: AccountsService.build)
            try s.start("alarms", migrations: AlarmsService.migrations, extra: paging, build: AlarmsService.build)
            try s.start("invitations", migrations: InvitationsService.migrations, extra: paging, build: InvitationsService.build)
            try s.startNotifications(push)
            try s.start("billing", migrations: BillingService.migrations, extra: paging.merging(["CHRONIR_APPLE_ROOT_CA_FILE": root]) { $1 },
                        build: BillingService.build)
            try s.startGateway(extra: ["CHRONIR_EXPORTS_PER_HOUR": "3"])
        }) { s in
            let owner = try await s.signup("Exporter")
            let stranger = try await s.signup("Stranger")
            let txn = TestTransaction(original: "4000001", productId: "com.chronir.plus.monthly", expires: Date().addingTimeInterval(3600))
            #expect(try await s.request(.POST, "/v1/subscriptions/apple", token: owner.token,
                                        json: ["signedTransaction": try await signer.sign(txn)]).status == 200)
            #expect(await eventually { (try? await s.request(.GET, "/v1/me", token: owner.token))?.json["tier"]?.stringValue == "plus" })
            // Alarms applies the same purchase (from the billing stream) before the operator's
            // Premium, which the purchase would otherwise overwrite.
            #expect(await s.alarmsTier(of: owner, is: "plus"), "alarms never applied the purchase")
            await s.settle()
            _ = try await s.setTier(owner, "premium")
            var alarms: [String] = []
            for i in 0..<5 {
                let r = try await s.request(.POST, "/v1/alarms", token: owner.token, json: ["title": "Export \(i)", "schedule": scheduleJSON("annual", day: i + 1)])
                alarms.append(try #require(r.json["id"]?.stringValue, "\(r.text)"))
            }
            for id in alarms.prefix(3) {
                #expect(try await s.request(.POST, "/v1/alarms/\(id)/completions", token: owner.token, json: ["status": "completed"]).status == 201)
            }
            #expect(try await s.request(.PUT, "/v1/me/devices/phone", token: owner.token, json: ["platform": "ios", "pushToken": "abc"]).status == 200)
            let g = try #require(try await s.request(.POST, "/v1/groups", token: owner.token, json: ["name": "Home"]).json["id"]?.stringValue)
            #expect(try await s.request(.POST, "/v1/invitations", token: owner.token, json: ["type": "group", "referenceId": g]).status == 201)
            // The stranger invites the owner: a received invitation and an inbox row.
            _ = try await s.setTier(stranger, "premium")
            let sg = try #require(try await s.request(.POST, "/v1/groups", token: stranger.token, json: ["name": "Club"]).json["id"]?.stringValue)
            #expect(try await s.request(.POST, "/v1/invitations", token: stranger.token,
                                        json: ["type": "group", "referenceId": sg, "inviteeEmail": owner.email]).status == 201)
            #expect(await eventually { await s.inboxCount(owner, type: "invitation_received") ?? 0 >= 1 }, "the invitation did not reach the owner's inbox")

            let export = try await s.request(.GET, "/v1/me/export", token: owner.token)
            #expect(export.status == 200, "\(export.text)")
            #expect(export.header("content-disposition")?.contains("attachment") == true)
            let doc = try #require(try JSONSerialization.jsonObject(with: export.body) as? [String: Any], "not a JSON object: \(export.text.prefix(500))")
            func section(_ name: String) -> [[String: Any]] { doc[name] as? [[String: Any]] ?? [] }
            #expect(doc["uid"] as? String == owner.uid)
            for name in ["profile", "devices", "identities", "sessions", "groups", "alarms", "completions", "calendarFeeds", "snoozes", "invitationsSent",
                         "invitationsReceived", "notifications", "deliveries", "subscriptions", "entitlement", "snoozeLedger", "snoozePolicies"] {
                #expect(doc[name] is [Any], "section \(name) missing")
            }
            #expect(section("profile").first?["email"] as? String == owner.email)
            #expect(section("profile").first?["password_hash"] == nil && !export.text.contains("scrypt"))
            #expect(section("devices").map { $0["device_id"] as? String } == ["phone"])
            #expect(Set(section("alarms").compactMap { $0["id"] as? String }) == Set(alarms))
            #expect(section("completions").count == 3)
            #expect(section("groups").first?["role"] as? String == "owner")
            #expect(section("invitationsSent").count == 1)
            #expect(section("invitationsReceived").count == 1)
            #expect(section("notifications").count >= 1)
            #expect(section("subscriptions").first?["original_transaction_id"] as? String == "4000001")
            #expect(section("entitlement").count == 1)

            // A stranger's export holds nothing of the owner's.
            let other = try await s.request(.GET, "/v1/me/export", token: stranger.token)
            #expect(other.status == 200)
            #expect(!other.text.contains(owner.uid), "\(other.text.prefix(300))")
            for id in alarms { #expect(!other.text.contains(id)) }
            let otherDoc = try #require(try JSONSerialization.jsonObject(with: other.body) as? [String: Any])
            #expect((otherDoc["alarms"] as? [Any])?.isEmpty == true)
            #expect((otherDoc["subscriptions"] as? [Any])?.isEmpty == true)

            // An account that only claims an address (never proved it) is not shown the invitations
            // sent to that address (issue 57: the pre-hijacker reading the victim's invitations).
            let claimant = try await s.signup("Claimant", verified: false)
            #expect(try await s.request(.POST, "/v1/invitations", token: stranger.token,
                                        json: ["type": "group", "referenceId": sg, "inviteeEmail": claimant.email]).status == 201)
            await s.settle()
            let claimed = try await s.request(.GET, "/v1/me/export", token: claimant.token)
            let claimedDoc = try #require(try JSONSerialization.jsonObject(with: claimed.body) as? [String: Any], "\(claimed.text.prefix(300))")
            #expect((claimedDoc["invitationsReceived"] as? [Any])?.isEmpty == true, "\(claimed.text.prefix(600))")

            // Three exports an hour per account: the fourth waits.
            for _ in 0..<2 { #expect(try await s.request(.GET, "/v1/me/export", token: owner.token).status == 200) }
            let fourth = try await s.request(.GET, "/v1/me/export", token: owner.token)
            #expect(fourth.status == 429, "\(fourth.text)")
            #expect(fourth.code == "CA019")
            #expect(fourth.header("retry-after") != nil)
        }
    }
}
