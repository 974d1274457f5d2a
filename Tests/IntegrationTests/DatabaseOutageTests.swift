import AccountsService
import AlarmsService
import Contracts
import Foundation
import Messaging
import PostgresNIO
import SchedulerService
import Support
import Testing

/// PostgreSQL restarted under a running suite: every service reconnects by itself, requests
/// during the outage are answered 503 `CA022` with `Retry-After`, and fires due during it
/// are recorded once each when it is back.
@Suite("A database restart is survived", .serialized)
struct DatabaseOutageTests {
    @Test("PostgreSQL down across the instant of 4 fires: 503 + Retry-After meanwhile, then every fire once, writes work again")
    func restartMidLoad() async throws {
        let cluster = try TestCluster()
        defer { cluster.destroy() }
        let fast = ["CHRONIR_DB_PROBE_INTERVAL": "500ms", "CHRONIR_DB_PROBE_TIMEOUT": "1s"]
        try await withTestSuite(label: "outage", adminURL: cluster.adminURL, start: { s in
            try s.start("accounts", migrations: AccountsService.migrations, extra: fast, build: AccountsService.build)
            try s.start("alarms", migrations: AlarmsService.migrations, extra: fast.merging(["CHRONIR_ALARM_CREATIONS_PER_MINUTE": "100"]) { $1 },
                        build: AlarmsService.build)
            try s.startGateway()
            try s.start("scheduler", migrations: SchedulerService.migrations,
                        extra: fast.merging(["CHRONIR_SCHEDULER_PUSH_TO": "alarms", "CHRONIR_SCHEDULER_PARTITIONS": "8",
                                             "CHRONIR_FIRE_LEAD": "0s"]) { $1 },
                        build: SchedulerService.build)
        }) { s in
            let u = try await s.signup("Outage")
            try await s.setTier(u, "plus")
            // Four alarms (a Plus user) due at the next whole minute at least 20 s away.
            var due = (Date().timeIntervalSince1970 / 60).rounded(.up) * 60
            if due - Date().timeIntervalSince1970 < 20 { due += 60 }
            let dueDate = Date(timeIntervalSince1970: due)
            let hm = String(ISOTime.format(dueDate).dropFirst(11).prefix(5))
            var ids: [String] = []
            for n in 1...4 {
                let r = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "Outage \(n)", "schedule": scheduleJSON("custom", day: 1, time: hm)])
                #expect(r.status == 201, "\(r.text)")
                ids.append(try #require(r.json["id"]?.stringValue))
            }
            // Down from 3 s before the instant to about 4 s after it.
            try await Task.sleep(for: .seconds(max(0, dueDate.timeIntervalSinceNow - 3)))
            try cluster.stop()
            let downAt = Date()
            // Once the services notice (a probe every 500 ms, given 1 s), requests are answered
            // 503 at once. (One already waiting for a pool connection waits for the database.)
            try await Task.sleep(for: .seconds(2))
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
            let recovered = Date().timeIntervalSince(upAt)
            // Writes work again: a new alarm, and a login.
            let again = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "After", "schedule": scheduleJSON("monthly")])
            #expect(again.status == 201, "\(again.text)")
            let login2 = try await s.request(.POST, "/v1/auth/login", json: ["email": u.email, "password": "correct horse"])
            #expect(login2.status == 200, "\(login2.text)")
            print("database outage: down \(String(format: "%.1f", upAt.timeIntervalSince(downAt))) s; all \(ids.count) fires recorded once \(String(format: "%.1f", recovered)) s after PostgreSQL was back")
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
