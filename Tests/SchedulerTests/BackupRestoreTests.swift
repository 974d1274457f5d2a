import Contracts
import Foundation
import Messaging
import PostgresNIO
import SchedulerService
import Support
@testable import SuiteSupport
import Testing

/// The backup of `docs/operations.md`, rehearsed: `pg_dump` of a running suite, restored with
/// `pg_restore` into a fresh database, the suite started on it. Fires pending at the dump fire
/// once after the restore, and every stream goes on from where the dump left it: no sequence
/// number reused or skipped, every consumer caught up, no dead letter.
@Suite("Backup and restore")
struct BackupRestoreTests {
    static let scheduler = ["CHRONIR_SCHEDULER_PARTITIONS": "16", "CHRONIR_FIRE_LEAD": "0s"]

    /// A PostgreSQL client program: the newest server version's, else the one on PATH.
    static func tool(_ name: String) -> String {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for v in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let path = "/usr/lib/postgresql/\(v)/bin/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return name
    }

    /// Runs a client program to its end; throws with its output when it fails.
    static func run(_ tool: String, _ arguments: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [tool] + arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw TestSetupError("\(tool) failed (\(p.terminationStatus)): \(String(decoding: output, as: UTF8.self))")
        }
    }

    func start(_ s: TestSuite, _ push: FakePushServer) throws {
        try s.startCore()
        try s.start("scheduler", migrations: SchedulerService.migrations, extra: Self.scheduler, build: SchedulerService.build)
        try s.startNotifications(push)
    }

    /// Each producing schema's head and the sequence numbers its outbox holds.
    func streams(_ url: String) async throws -> [String: (head: Int64, seqs: [Int64])] {
        try await withDatabase(url: url, schema: "public") { db in
            var out: [String: (Int64, [Int64])] = [:]
            for schema in ["accounts", "alarms", "scheduler", "notifications"] {
                let head = try await db.query("SELECT coalesce(max(last_seq), 0) FROM \(unescaped: schema).outbox_streams").first(Int64.self) ?? 0
                let seqs = try await db.query("SELECT seq FROM \(unescaped: schema).outbox WHERE seq IS NOT NULL ORDER BY seq").all(Int64.self)
                out[schema] = (head, seqs)
            }
            return out
        }
    }

    @Test("a dump of a running suite restored into a fresh database: fires pending at the dump fire once, and the streams go on without a gap")
    func restoredSuiteContinues() async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        let dump = FileManager.default.temporaryDirectory.appendingPathComponent("chronir-backup-\(UUID().uuidString).dump").path
        defer { try? FileManager.default.removeItem(atPath: dump) }
        var ids: [String] = []
        var user: TestUser?
        var before: [String: (head: Int64, seqs: [Int64])] = [:]
        var dueAt: Date = .distantPast
        try await withTestSuite(label: "backup", start: { try start($0, push) }) { s in
            let u = try await s.signup("Keeper")
            try await s.setTier(u, "premium")
            user = u
            let hook = try await s.request(.PUT, "/v1/me/devices/hook", token: u.token,
                                           json: ["platform": "web", "webhookUrl": "\(push.baseURL)/hook/keeper"])
            #expect(hook.status == 200 || hook.status == 201, "\(hook.text)")
            try await s.waitForDevices(u, count: 1)
            for k in 0..<4 {
                let r = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "Kept \(k)", "schedule": scheduleJSON("annual", day: 1)])
                ids.append(try #require(r.json["id"]?.stringValue, "\(r.text)"))
            }
            // Due after the restore (the dump, the restore and the new start take a few seconds).
            for id in ids { dueAt = try await s.dueIn(id, seconds: 25) }
            let settled = await eventually(timeout: .seconds(20)) { await s.unsettled(deliveries: false).isEmpty }
            let left = await s.unsettled(deliveries: false)
            #expect(settled, "\(left)")
            // The dump, taken while every service runs.
            try Self.run(Self.tool("pg_dump"), ["--format=custom", "--file=\(dump)", "--dbname=\(s.databaseURL)"])
            before = try await streams(s.databaseURL)
            let fired = try await s.inDatabase("scheduler") { db in
                try await db.query("SELECT count(*)::int FROM fires WHERE kind = 'fire'").first(Int.self) ?? -1
            }
            #expect(fired == 0, "nothing fired before the dump")
        }
        #expect(Date() < dueAt, "the fires must still be pending when the suite stops (\(Date().timeIntervalSince(dueAt)) s late)")
        // A fresh database, restored from the dump; the suite starts on it.
        let restored = try await TestDatabase.create("restored")
        let restoreStart = ContinuousClock.now
        try Self.run(Self.tool("pg_restore"), ["--exit-on-error", "--no-owner", "--dbname=\(restored)", dump])
        let restoreTook = restoreStart.duration(to: .now)
        let u = try #require(user)
        try await withTestSuite(label: "restored", databaseURL: restored, start: { try start($0, push) }) { s in
            // Each pending fire fires once, and rings the device once.
            let firedAll = await eventually(timeout: .seconds(60)) {
                let n = try? await s.inDatabase("scheduler") { db in
                    try await db.query("SELECT count(*)::int FROM fires WHERE kind = 'fire' AND outcome = 'fired'").first(Int.self)
                }
                return n == ids.count
            }
            let pending = await s.unsettled()
            #expect(firedAll, "fires after the restore: \(pending)")
            // A change after the restore travels every stream as before.
            let r = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "After", "schedule": scheduleJSON("weekly", day: 3)])
            #expect(r.status == 201, "\(r.text)")
            let settledAfter = await eventually(timeout: .seconds(20)) { await s.unsettled().isEmpty }
            let leftAfter = await s.unsettled()
            #expect(settledAfter, "\(leftAfter)")
            let fires = try await s.inDatabase("scheduler") { db in
                try await db.query("SELECT alarm_id FROM fires WHERE kind = 'fire'").all(String.self)
            }
            #expect(fires.sorted() == ids.sorted(), "each pending fire recorded once")
            let rings = push.requests("webhook").filter { ($0.json?["type"] as? String) == "alarm_fired" }
                .compactMap { ($0.json?["data"] as? [String: Any])?["alarmId"] as? String }
            #expect(rings.sorted() == ids.sorted(), "one ring per fire: \(rings)")
            let after = try await streams(s.databaseURL)
            for (schema, b) in before {
                let a = try #require(after[schema])
                #expect(a.head >= b.head, "\(schema): head \(a.head) after, \(b.head) at the dump")
                #expect(a.seqs == (a.head > 0 ? Array(1...a.head) : []), "\(schema): sequence numbers 1…\(a.head) without a gap or a repeat")
            }
            #expect((after["alarms"]?.head ?? 0) > (before["alarms"]?.head ?? 0), "the alarms stream went on")
            let deadLetters = try await s.inDatabase("public") { db in
                var n = 0
                for schema in ["accounts", "alarms", "scheduler", "notifications"] {
                    n += try await db.query("SELECT count(*)::int FROM \(unescaped: schema).consumer_dead_letters").first(Int.self) ?? 0
                }
                return n
            }
            #expect(deadLetters == 0)
            print("backup/restore: pg_restore took \(restoreTook); \(ids.count) pending fires fired once each after the restore; heads at the dump \(before.mapValues(\.head)), now \(after.mapValues(\.head))")
        }
    }
}
