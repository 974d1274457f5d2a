import AccountsService
import AlarmsService
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

/// PostgreSQL restarted under a running suite: every service reconnects by itself, requests
/// during the outage are answered 503 `CA022` with `Retry-After`, fires due during it are
/// recorded once each when it is back, and every event stream is consumed to its head once.
@Suite("A database restart is survived", .serialized)
struct DatabaseOutageTests {
    @Test("PostgreSQL down across the instant of 4 fires: 503 + Retry-After meanwhile, then every fire and event once, every service back, writes work again")
    func restartMidLoad() async throws {
        let cluster = try TestCluster()
        defer { cluster.destroy() }
        let signer = try StoreSigner()
        let root = try signer.rootFile()
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        let fast = ["CHRONIR_DB_PROBE_INTERVAL": "500ms", "CHRONIR_DB_PROBE_TIMEOUT": "1s"]
        try await withTestSuite(label: "outage", adminURL: cluster.adminURL, start: { s in
            try s.start("accounts", migrations: AccountsService.migrations, extra: fast, build: AccountsService.build)
            try s.start("alarms", migrations: AlarmsService.migrations, extra: fast.merging(["CHRONIR_ALARM_CREATIONS_PER_MINUTE": "100"]) { $1 },
                        build: AlarmsService.build)
            try s.startGateway()
            try s.start("scheduler", migrations: SchedulerService.migrations,
                        extra: fast.merging(["CHRONIR_SCHEDULER_PARTITIONS": "8",
                                             "CHRONIR_FIRE_LEAD": "0s"]) { $1 },
                        build: SchedulerService.build)
            try s.start("notifications", migrations: NotificationsService.migrations,
                        extra: fast.merging(push.environment) { $1 }.merging(["CHRONIR_DELIVERY_POLL": "50ms"]) { $1 }, build: NotificationsService.build)
            try s.start("invitations", migrations: InvitationsService.migrations, extra: fast, build: InvitationsService.build)
            try s.start("billing", migrations: BillingService.migrations, extra: fast.merging(["CHRONIR_APPLE_ROOT_CA_FILE": root]) { $1 },
                        build: BillingService.build)
        }) { s in
            let u = try await s.signup("Outage")
            try await s.setTier(u, "plus")
            // Four alarms (a Plus user), their fires moved to one instant 8 s away (it was the
            // next whole minute at least 20 s away: 20–80 s of waiting in a tier that runs alone).
            var ids: [String] = []
            for n in 1...4 {
                let r = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "Outage \(n)", "schedule": scheduleJSON("custom", day: 1)])
                #expect(r.status == 201, "\(r.text)")
                ids.append(try #require(r.json["id"]?.stringValue))
            }
            for id in ids { try await s.awaitFireTimer(id) }
            let dueDate = Date().addingTimeInterval(8)  // the database's instant is this or a little later
            try await s.staggerFires(ids, after: 8, every: 0)
            // Down from 3 s before the instant to about 4 s after it.
            try await Task.sleep(for: .seconds(max(0, dueDate.timeIntervalSinceNow - 3)))
            let firedBefore = try await fireRows(s.databaseURL, ids: ids).count
            try cluster.stop()
            let downAt = Date()
            // The outage must cover the instant with all four still pending, or it tests nothing.
            try #require(firedBefore == 0 && downAt < dueDate.addingTimeInterval(-1),
                         "PostgreSQL went down at \(downAt) for fires due \(dueDate), \(firedBefore) already recorded (a slow machine?)")
            // Once the services notice (a probe every 500 ms, given 1 s), requests are answered
            // 503 at once. (One already waiting for a pool connection waits for the database.)
            var outage: HTTPResult?
            let noticed = await eventually(timeout: .seconds(5), every: .milliseconds(250)) {
                outage = try? await s.request(.GET, "/v1/alarms", token: u.token)
                return outage?.status == 503
            }
            #expect(noticed, "during the outage: \(outage?.status ?? 0) \(outage?.text ?? "")")
            #expect(outage?.code == "CA022")
            #expect(Int(outage?.header("Retry-After") ?? "") ?? 0 >= 1)
            let login = try await s.request(.POST, "/v1/auth/login", json: ["email": u.email, "password": "correct horse"])
            #expect(login.status == 503, "\(login.text)")
            #expect(login.header("Retry-After") != nil)
            try await Task.sleep(for: .seconds(max(0, 7 - Date().timeIntervalSince(downAt))))
            try cluster.start()
            let upAt = Date()

            // Every fire is recorded once, late by the outage, not lost.
            var fired: [String: Date] = [:]
            let all = await eventually(timeout: .seconds(60), every: .milliseconds(250)) {
                for id in ids where fired[id] == nil {
                    if let a = try? await s.request(.GET, "/v1/alarms/\(id)", token: u.token),
                       let at = a.json["lastFiredDate"]?.stringValue.flatMap(ISOTime.parse) {
                        fired[id] = at
                    }
                }
                return fired.count == ids.count
            }
            #expect(all, "fired after the restart: \(fired.count) of \(ids.count)")
            let rows = try await fireRows(s.databaseURL, ids: ids)
            #expect(rows.count == ids.count, "fire rows: \(rows)")
            #expect(Set(rows.map(\.alarm)) == Set(ids))
            // Recorded after PostgreSQL was back (the scheduler's stamp, taken before its statement).
            let stamp = ISO8601DateFormatter()
            stamp.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let early = await Self.count(s, "scheduler", """
                SELECT count(*)::int FROM fires WHERE kind = 'fire' AND alarm_id = ANY('{\(ids.joined(separator: ","))}') AND fired_at < '\(stamp.string(from: upAt.addingTimeInterval(-0.5)))'
                """)
            #expect(early == 0, "fires stamped before PostgreSQL was back")
            let recovered = Date().timeIntervalSince(upAt)
            // Every service reconnected by itself and says so (each service's probe
            // notices on its own schedule: the scheduler's fires above say nothing of accounts').
            for service in ServiceDirectory.Name.allCases {
                var health: HealthReport?
                #expect(await eventually(timeout: .seconds(20)) {
                    health = try? await s.rpc(service, SystemMethods.Health.self, .init())
                    return health?.status == "ok"
                }, "\(service) after the restart: \(String(describing: health))")
            }
            // Writes work again once every service says so: a new alarm, and a login.
            let again = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "After", "schedule": scheduleJSON("monthly")])
            #expect(again.status == 201, "\(again.text)")
            let login2 = try await s.request(.POST, "/v1/auth/login", json: ["email": u.email, "password": "correct horse"])
            #expect(login2.status == 200, "\(login2.text)")
            // Each fire reached the inbox once (scheduler → notifications across the outage).
            var inboxFires: Int?
            #expect(await eventually(timeout: .seconds(20)) {
                inboxFires = await Self.count(s, "notifications", "SELECT count(*)::int FROM inbox WHERE user_id = '\(u.uid)' AND type = 'alarm_fired'")
                return inboxFires == ids.count
            }, "fires in the inbox: \(String(describing: inboxFires))")
            // The services that write and read events work again: an invitation, a purchase.
            try await s.setTier(u, "premium")
            let inv = try await s.request(.POST, "/v1/invitations", token: u.token, json: ["type": "alarm", "referenceId": ids[0]])
            #expect(inv.status == 201, "\(inv.text)")
            let txn = TestTransaction(original: "5000001", productId: "com.chronir.plus.monthly", expires: Date().addingTimeInterval(3600))
            let bought = try await s.request(.POST, "/v1/subscriptions/apple", token: u.token, json: ["signedTransaction": try await signer.sign(txn)])
            #expect(bought.status == 200, "\(bought.text)")
            // Every consumer's checkpoint reaches its producer's head, with no dead letter:
            // nothing lost, nothing applied twice.
            let streams: [(consumer: String, stream: String)] = [("scheduler", "alarms"), ("alarms", "scheduler"), ("notifications", "scheduler"),
                                                                 ("invitations", "alarms"), ("accounts", "billing"), ("billing", "accounts"),
                                                                 ("alarms", "accounts"), ("notifications", "accounts")]
            var behind: [String] = []
            #expect(await eventually(timeout: .seconds(20)) {
                behind = []
                for (consumer, stream) in streams {
                    let head = await Self.count(s, stream, "SELECT coalesce(max(last_seq), 0)::int FROM outbox_streams WHERE stream = '\(stream)'") ?? -1
                    let at = await Self.count(s, consumer, "SELECT coalesce(max(seq), 0)::int FROM consumer_checkpoints WHERE stream = '\(stream)'") ?? -2
                    if at < head { behind.append("\(consumer) on \(stream): \(at) of \(head)") }
                }
                return behind.isEmpty
            }, "behind: \(behind)")
            for service in ["accounts", "alarms", "scheduler", "notifications", "invitations", "billing"] {
                #expect(await Self.count(s, service, "SELECT count(*)::int FROM consumer_dead_letters") == 0, "\(service) dead-lettered events")
            }
            print("database outage: down \(String(format: "%.1f", upAt.timeIntervalSince(downAt))) s; all \(ids.count) fires recorded once \(String(format: "%.1f", recovered)) s after PostgreSQL was back")
        }
    }

    static func count(_ s: TestSuite, _ schema: String, _ sql: String) async -> Int? {
        try? await withDatabase(url: s.databaseURL, schema: schema) { db in
            try await db.query(PostgresQuery(unsafeSQL: sql)).first(Int.self)
        }
    }

    /// The scheduler's fire log rows of `ids` (kind `fire`).
    func fireRows(_ url: String, ids: [String]) async throws -> [(alarm: String, occurrence: Date)] {
        try await withDatabase(url: url, schema: "scheduler") { db in
            var out: [(alarm: String, occurrence: Date)] = []
            let rows = try await db.query("SELECT alarm_id, occurrence_at FROM fires WHERE kind = 'fire' AND alarm_id = ANY(\(ids))")
            for try await (a, o) in rows.decode((String, Date).self) { out.append((a, o)) }
            return out
        }
    }
}
