import BillingService
import Contracts
import Foundation
import InvitationsService
import Messaging
import NotificationsService
import PostgresNIO
import SchedulerService
import ServiceKit
import Support
@testable import SuiteSupport
import Testing

/// `DELETE /v1/me` reaches every service: afterwards no row of any schema holds the uid or the
/// email (billing's anonymized purchases aside; outboxes keep events for their retention).
@Suite("Account deletion")
struct AccountDeletionTests {
    /// Rows per `schema.table.column` whose text holds `needle`, over every text, array and
    /// JSON column of the service schemas (outboxes and dead letters left out).
    static func traces(of needle: String, in url: String) async throws -> [String: Int] {
        try await withDatabase(url: url, schema: "public") { db in
            let columns = try await db.query("""
                SELECT table_schema, table_name, column_name FROM information_schema.columns
                WHERE table_schema IN ('accounts', 'alarms', 'scheduler', 'notifications', 'invitations', 'billing')
                  AND data_type IN ('text', 'character varying', 'ARRAY', 'jsonb', 'json')
                  AND table_name NOT IN ('outbox', 'consumer_dead_letters', 'outbox_streams', 'schema_migrations')
                """).decode((String, String, String).self)
            var found: [String: Int] = [:]
            for try await (schema, table, column) in columns {
                let sql = "SELECT count(*)::int FROM \"\(schema)\".\"\(table)\" WHERE \"\(column)\"::text ILIKE '%' || $1 || '%'"
                var binds = PostgresBindings()
                binds.append(needle)
                let n = try await db.query(PostgresQuery(unsafeSQL: sql, binds: binds)).first(Int.self) ?? 0
                if n > 0 { found["\(schema).\(table).\(column)"] = n }
            }
            return found
        }
    }

    @Test("a deleted account leaves no uid or email in any schema; its group passes to an admin, members see tombstones, its tokens are refused")
    func deletionReachesEverything() async throws {
        let signer = try StoreSigner()
        let root = try signer.rootFile()
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        try await withTestSuite(label: "deletion", start: { s in
            try s.startCore()
            try s.start("invitations", migrations: InvitationsService.migrations, extra: ["CHRONIR_INVITATIONS_PER_HOUR": "1000"],
                        build: InvitationsService.build)
            try s.start("scheduler", migrations: SchedulerService.migrations, extra: ["CHRONIR_SCHEDULER_PARTITIONS": "16"],
                        build: SchedulerService.build)
            try s.startNotifications(push)
            try s.start("billing", migrations: BillingService.migrations, extra: ["CHRONIR_APPLE_ROOT_CA_FILE": root], build: BillingService.build)
        }) { s in
            let owner = try await s.signup("Leaving")
            let admin = try await s.signup("Admin")
            let member = try await s.signup("Member")
            let friend = try await s.signup("Friend")
            // A subscription (billing keeps it, anonymized); then Premium from the operator.
            let txn = TestTransaction(original: "3000001", productId: "com.chronir.plus.monthly", expires: Date().addingTimeInterval(3600))
            #expect(try await s.request(.POST, "/v1/subscriptions/apple", token: owner.token,
                                        json: ["signedTransaction": try await signer.sign(txn)]).status == 200)
            #expect(await eventually { (try? await s.request(.GET, "/v1/me", token: owner.token))?.json["tier"]?.stringValue == "plus" })
            // The alarms service applies the same event (from the billing stream) before the
            // operator's Premium, which it would otherwise overwrite.
            #expect(await s.alarmsTier(of: owner, is: "plus"), "alarms never applied the purchase")
            await s.settle()
            _ = try await s.setTier(owner, "premium")
            _ = try await s.setTier(admin, "premium")
            // Alarms: one fired (inbox, fire log), one shared with a friend who completed it.
            func alarm(_ title: String, token: String, extra: [String: Any] = [:]) async throws -> String {
                let r = try await s.request(.POST, "/v1/alarms", token: token,
                                            json: ["title": title, "schedule": scheduleJSON("annual", day: 1)].merging(extra) { $1 })
                return try #require(r.json["id"]?.stringValue, "\(r.text)")
            }
            let fired = try await alarm("Fired", token: owner.token)
            let shared = try await alarm("Shared", token: owner.token)
            let invite = try await s.request(.POST, "/v1/invitations", token: owner.token,
                                             json: ["type": "alarm", "referenceId": shared, "inviteeEmail": friend.email])
            let code = try #require(invite.json["id"]?.stringValue, "\(invite.text)")
            #expect(try await s.request(.POST, "/v1/invitations/\(code)/accept", token: friend.token).status == 200)
            #expect(await eventually { (try? await s.request(.GET, "/v1/alarms/\(shared)", token: friend.token))?.status == 200 })
            #expect(try await s.request(.POST, "/v1/alarms/\(shared)/completions", token: friend.token, json: ["status": "completed"]).status == 201)
            #expect(try await s.request(.POST, "/v1/alarms/\(fired)/completions", token: owner.token, json: ["status": "completed"]).status == 201)
            // The friend's own alarm, shared with the leaving user, who completes it: the friend's
            // completion notification names them until the deletion.
            _ = try await s.setTier(friend, "premium")
            let friends = try await alarm("Friend's", token: friend.token)
            let back = try await s.request(.POST, "/v1/invitations", token: friend.token,
                                           json: ["type": "alarm", "referenceId": friends, "inviteeEmail": owner.email])
            let backCode = try #require(back.json["id"]?.stringValue, "\(back.text)")
            #expect(try await s.request(.POST, "/v1/invitations/\(backCode)/accept", token: owner.token).status == 200)
            #expect(await eventually { (try? await s.request(.GET, "/v1/alarms/\(friends)", token: owner.token))?.status == 200 })
            #expect(try await s.request(.POST, "/v1/alarms/\(friends)/completions", token: owner.token, json: ["status": "completed"]).status == 201)
            #expect(await eventually(timeout: .seconds(20)) {
                (try? await s.inDatabase("notifications") {
                    try await $0.query("SELECT count(*)::int FROM inbox WHERE user_id = \(friend.uid) AND data->>'completedBy' = \(owner.uid)").first(Int.self)
                }) == 1
            }, "the friend was not told of the completion")
            // A device, and a fire in the inbox.
            #expect(try await s.request(.PUT, "/v1/me/devices/hook", token: owner.token,
                                        json: ["platform": "web", "webhookUrl": "\(push.baseURL)/hook/leaving"]).status == 200)
            _ = try await s.dueIn(fired, seconds: 1)
            #expect(await eventually(timeout: .seconds(20)) { await s.inboxCount(owner, type: "alarm_fired") ?? 0 >= 1 }, "no fire reached the inbox")
            // A group with an admin (joined first) and a member; invitations pending, sent and received.
            let g = try #require(try await s.request(.POST, "/v1/groups", token: owner.token, json: ["name": "Family"]).json["id"]?.stringValue)
            for (user, role) in [(admin, "admin"), (member, "member")] {
                let inv = try await s.request(.POST, "/v1/invitations", token: owner.token, json: ["type": "group", "referenceId": g])
                let c = try #require(inv.json["id"]?.stringValue, "\(inv.text)")
                #expect(try await s.request(.POST, "/v1/invitations/\(c)/accept", token: user.token).status == 200)
                if role == "admin" {
                    #expect(try await s.request(.PATCH, "/v1/groups/\(g)/members/\(user.uid)", token: owner.token, json: ["role": "admin"]).status == 200)
                }
            }
            #expect(try await s.request(.POST, "/v1/invitations", token: owner.token,
                                        json: ["type": "group", "referenceId": g, "inviteeEmail": "someone@example.com"]).status == 201)
            let adminsGroup = try #require(try await s.request(.POST, "/v1/groups", token: admin.token, json: ["name": "Club"]).json["id"]?.stringValue)
            #expect(try await s.request(.POST, "/v1/invitations", token: admin.token,
                                        json: ["type": "group", "referenceId": adminsGroup, "inviteeEmail": owner.email]).status == 201)
            let before = try await Self.traces(of: owner.uid, in: s.databaseURL)
            #expect(before.keys.contains { $0.hasPrefix("alarms.") } && before.keys.contains { $0.hasPrefix("billing.") }
                    && before.keys.contains { $0.hasPrefix("notifications.") } && before.keys.contains { $0.hasPrefix("invitations.") }
                    && before.keys.contains { $0.hasPrefix("scheduler.") }, "the account does not reach every service: \(before)")

            // Each service's own confirmation (`chronirctl user deletion-status`) sees it too.
            let holding = try await s.rpc(.alarms, SystemMethods.UserTraces.self, .init(uid: owner.uid))
            #expect(holding.rows["alarms.owner_id"] == 2, "\(holding)")

            // The deletion.
            #expect(try await s.request(.DELETE, "/v1/me", token: owner.token).status == 204)
            #expect(try await s.request(.GET, "/v1/me", token: owner.token).status == 401)
            #expect(try await s.request(.GET, "/v1/alarms", token: owner.token).status == 401)
            let refreshed = try await s.request(.POST, "/v1/auth/refresh", json: ["refreshToken": try #require(owner.refreshToken)])
            #expect(refreshed.status == 401, "\(refreshed.text)")
            var uidLeft: [String: Int] = [:]
            var emailLeft: [String: Int] = [:]
            let purged = await eventually(timeout: .seconds(20), every: .milliseconds(500)) {
                uidLeft = (try? await Self.traces(of: owner.uid, in: s.databaseURL)) ?? ["?": 1]
                emailLeft = (try? await Self.traces(of: owner.email, in: s.databaseURL)) ?? ["?": 1]
                return uidLeft.isEmpty && emailLeft.isEmpty
            }
            #expect(purged, "uid still in \(uidLeft); email still in \(emailLeft)")
            for service in [ServiceDirectory.Name.accounts, .alarms, .scheduler, .notifications, .invitations, .billing] {
                let report = try await s.rpc(service, SystemMethods.UserTraces.self, .init(uid: owner.uid))
                #expect(report.service == service.rawValue && report.rows.isEmpty, "\(report)")
            }

            // The group passed to its longest-standing admin; the member stays.
            let group = try await s.request(.GET, "/v1/groups/\(g)", token: admin.token)
            #expect(group.status == 200, "\(group.text)")
            #expect(group.json["ownerId"]?.stringValue == admin.uid, "\(group.text)")
            #expect(try await s.request(.GET, "/v1/groups/\(g)", token: member.token).status == 200)
            // The friend's feed has the shared alarm as a tombstone; the alarm is gone.
            let feed = try await s.request(.GET, "/v1/alarms?since=0&limit=100", token: friend.token)
            let change = feed.json["changes"]?.arrayValue?.first { $0["id"]?.stringValue == shared }
            #expect(change?["deleted"] == .bool(true), "\(feed.text)")
            #expect(try await s.request(.GET, "/v1/alarms/\(shared)", token: friend.token).status == 404)
            // Billing keeps the purchase for the books, under a name that leads nowhere.
            let kept = try await s.inDatabase("billing") {
                try await $0.query("SELECT user_id FROM subscriptions WHERE original_transaction_id = '3000001'").all(String.self)
            }
            #expect(kept.count == 1 && kept.allSatisfy { $0.hasPrefix("deleted-") }, "\(kept)")
        }
    }

    @Test("`chronirctl user deletion-status`: purged after a deletion, exit 1 while the account lives, and a uid that never existed refused")
    func deletionStatusCommand() async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        try await withTestSuite(label: "deletion_status", start: { s in
            try s.startCore()
            try s.start("invitations", migrations: InvitationsService.migrations, build: InvitationsService.build)
            try s.start("scheduler", migrations: SchedulerService.migrations, extra: ["CHRONIR_SCHEDULER_PARTITIONS": "16"],
                        build: SchedulerService.build)
            try s.startNotifications(push)
            try s.start("billing", migrations: BillingService.migrations, build: BillingService.build)
        }) { s in
            func status(_ uid: String) async throws -> (Int32?, String) {
                let ctl = try TestProcess("chronirctl", ["user", "deletion-status", uid], environment: s.environment(for: "chronirctl"))
                let code = await ctl.waitForExit()
                return (code, ctl.output)
            }
            let leaving = try await s.signup("Leaving")
            let staying = try await s.signup("Staying")
            // A live account: accounts holds it.
            let (live, liveOutput) = try await status(staying.uid)
            #expect(live == 1 && liveOutput.contains("holds the uid"), "\(liveOutput)")

            // A deleted one: purged everywhere, exit 0.
            #expect(try await s.request(.DELETE, "/v1/me", token: leaving.token).status == 204)
            #expect(await eventually(timeout: .seconds(20), every: .milliseconds(500)) {
                (try? await Self.traces(of: leaving.uid, in: s.databaseURL))?.isEmpty == true
            }, "the deleted account is still somewhere")
            let (deleted, deletedOutput) = try await status(leaving.uid)
            #expect(deleted == 0 && deletedOutput.contains("purged") && !deletedOutput.contains("unknown"), "\(deletedOutput)")

            // A uid no account ever had: refused with one line, exit 1 (not a usage error, 64).
            let never = "never-\(UUID().uuidString.lowercased())"
            let (unknown, unknownOutput) = try await status(never)
            #expect(unknown == 1, "\(unknownOutput)")
            #expect(unknownOutput.contains("\(never): unknown uid") && !unknownOutput.contains("purged") && !unknownOutput.contains("USAGE"),
                    "\(unknownOutput)")
        }
    }
}
