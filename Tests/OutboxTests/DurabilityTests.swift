import Foundation
import Persistence
import PostgresNIO
import Support
import Testing

/// Multi-process tests of durable events: real producer and consumer processes, a real
/// PostgreSQL, real sockets; processes stopped and killed.
@Suite("Durable events across processes", .serialized)
struct DurabilityTests {
    struct Ports {
        let rpc = freePort()
        let pub = freePort()
        var producerEnv: [String: String] {
            ["CHRONIR_RPC_BIND": "tcp://127.0.0.1:\(rpc)", "CHRONIR_PUB_BIND": "tcp://127.0.0.1:\(pub)", "CHRONIR_BUS_KEYS": TestBusKeys.directory]
        }
        var consumerEnv: [String: String] {
            ["PEER_RPC": "tcp://127.0.0.1:\(rpc)", "PEER_EVENTS": "tcp://127.0.0.1:\(pub)", "CHRONIR_BUS_KEYS": TestBusKeys.directory]
        }
    }

    func applied(_ url: String) async throws -> [(Int64, Int)] {
        try await withDatabase(url: url, schema: "consumer") { db in
            var out: [(Int64, Int)] = []
            let rows = try await db.query("SELECT seq, n FROM applied ORDER BY applied_at, seq")
            for try await (seq, n) in rows.decode((Int64, Int).self) { out.append((seq, n)) }
            return out
        }
    }

    func appliedCount(_ url: String) async -> Int {
        (try? await withDatabase(url: url, schema: "consumer") { db in
            try await db.query("SELECT count(*)::int FROM applied").first(Int.self) ?? 0
        }) ?? 0
    }

    /// The consumer's checkpoint of the producer's stream (0 before the first).
    func checkpoint(_ url: String) async -> Int {
        (try? await withDatabase(url: url, schema: "consumer") { db in
            try await db.query("SELECT coalesce(max(seq), 0)::int FROM consumer_checkpoints WHERE stream = 'producer'").first(Int.self) ?? 0
        }) ?? -1
    }

    /// Waits until the consumer's checkpoint reached `head`, the producer's last event: whatever
    /// would be applied twice has been applied by then.
    func caughtUp(_ url: String, head: Int) async -> Bool {
        await eventually(timeout: .seconds(60)) { await checkpoint(url) == head }
    }

    @Test("a consumer SIGKILLed mid-batch, after its handler wrote rows and before the checkpoint, applies every event exactly once after a restart")
    func killedBetweenApplyAndCheckpoint() async throws {
        let url = try await TestDatabase.create("durability")
        let ports = Ports()
        var env = ports.consumerEnv
        env["DATABASE_URL"] = url
        // The handler inserts rows with no unique key, so an event applied twice shows as a
        // second row. The consumer dies at its third application, inside a batch.
        var armed = env
        armed["CHRONIR_FAILPOINT_KILL_BEFORE_CHECKPOINT"] = "producer:3"
        let consumer = try TestProcess("chronir-testpeer", ["consume"], environment: armed, label: "armed")
        #expect(await consumer.waitForOutput("consumer ready"))
        let total = 3000
        let producer = try TestProcess("chronir-testpeer", ["produce", "--count", "\(total)"],
                                       environment: ports.producerEnv.merging(["DATABASE_URL": url]) { $1 }, label: "producer")
        #expect(await consumer.waitForExit(timeout: .seconds(60)) == SIGKILL, "consumer log: \(consumer.output.suffix(2000))")
        // The batch it died in: handled (rows written in the transaction) and not checkpointed.
        let line = try #require(consumer.output.split(separator: "\n").first { $0.contains("failpoint: SIGKILL after applied producer events") })
        let range = try #require(line.firstMatch(of: /events (\d+)\.\.\.(\d+)/), "\(line)")
        let (first, last) = (Int(range.1)!, Int(range.2)!)
        #expect(last > first, "the crash should hit a batch of several events: \(line)")
        let committed = await appliedCount(url)
        #expect(committed == first - 1, "rows committed at the crash: \(committed), batch \(first)...\(last)")
        #expect(await checkpoint(url) == first - 1)
        #expect(last < total, "events must remain after the crash")

        let restarted = try TestProcess("chronir-testpeer", ["consume"], environment: env, label: "restarted")
        #expect(await caughtUp(url, head: total), "consumer log: \(restarted.output.suffix(2000))")
        let rows = try await applied(url)
        #expect(rows.count == total)
        #expect(rows.map(\.0).sorted() == Array(1...total).map(Int64.init), "each event applied once")
        #expect(rows.map(\.1).sorted() == Array(1...total))
        await restarted.terminate()
        await producer.terminate()
    }

    @Test("a stopped consumer restarts and applies 1 000 events exactly once, in order")
    func consumerCatchesUp() async throws {
        let url = try await TestDatabase.create("durability")
        let ports = Ports()
        var env = ports.consumerEnv
        env["DATABASE_URL"] = url
        // The consumer runs, then is stopped.
        let consumer1 = try TestProcess("chronir-testpeer", ["consume"], environment: env, label: "consumer1")
        #expect(await consumer1.waitForOutput("consumer ready"))
        #expect(await consumer1.terminate() == 0)
        // 1 000 events are produced while no consumer runs.
        let producer = try TestProcess("chronir-testpeer", ["produce", "--count", "1000"],
                                       environment: ports.producerEnv.merging(["DATABASE_URL": url]) { $1 }, label: "producer")
        #expect(await producer.waitForOutput("appended 1000 events", timeout: .seconds(60)))
        // The consumer comes back and catches up.
        let consumer2 = try TestProcess("chronir-testpeer", ["consume"], environment: env, label: "consumer2")
        #expect(await caughtUp(url, head: 1000), "consumer log: \(consumer2.output.suffix(2000))")
        let rows = try await applied(url)
        #expect(rows.count == 1000)
        #expect(rows.map(\.0) == Array(1...1000).map(Int64.init))
        #expect(rows.map(\.1) == Array(1...1000))
        await consumer2.terminate()
        await producer.terminate()
    }

    @Test("SIGTERM during startup, before anything serves, still stops the process gracefully")
    func sigtermDuringStartup() async throws {
        let url = try await TestDatabase.create("durability")
        var env = Ports().consumerEnv
        env["DATABASE_URL"] = url
        // "starting" is logged before the database is reached and the migrations run.
        let consumer = try TestProcess("chronir-testpeer", ["consume"], environment: env, label: "early-term")
        #expect(await consumer.waitForOutput("starting"))
        #expect(await consumer.terminate() == 0, "log: \(consumer.output.suffix(2000))")
        #expect(consumer.output.contains("received SIGTERM"))
        #expect(consumer.output.contains("stopped"))
    }

    @Test("a producer killed between commit and publish loses nothing: its events reach the consumer after the restart")
    func producerCrashBeforePublish() async throws {
        let url = try await TestDatabase.create("durability")
        let ports = Ports()
        var env = ports.consumerEnv
        env["DATABASE_URL"] = url
        let consumer = try TestProcess("chronir-testpeer", ["consume"], environment: env, label: "consumer")
        #expect(await consumer.waitForOutput("consumer ready"))
        let producerEnv = ports.producerEnv.merging(["DATABASE_URL": url]) { $1 }
        // Commits 300 events and dies before the relay sends any.
        let crashing = try TestProcess("chronir-testpeer", ["produce", "--count", "300", "--no-relay"], environment: producerEnv, label: "crashing")
        #expect(await crashing.waitForExit() == 0)
        #expect(await appliedCount(url) == 0)
        // Restarted, it publishes what was committed, then 200 more.
        let producer = try TestProcess("chronir-testpeer", ["produce", "--count", "200"], environment: producerEnv, label: "producer")
        #expect(await caughtUp(url, head: 500), "consumer log: \(consumer.output.suffix(2000))")
        // Kill -9 the idle consumer, produce more, restart: it catches up on what it missed.
        // (`killedBetweenApplyAndCheckpoint` kills one in the middle of a batch.)
        consumer.kill9()
        let more = try TestProcess("chronir-testpeer", ["produce", "--count", "100"],
                                   environment: Ports().producerEnv.merging(["DATABASE_URL": url]) { $1 }, label: "more")
        #expect(await more.waitForOutput("appended 100 events", timeout: .seconds(60)))
        await more.terminate()
        let consumer2 = try TestProcess("chronir-testpeer", ["consume"], environment: env, label: "consumer2")
        #expect(await caughtUp(url, head: 600), "consumer log: \(consumer2.output.suffix(2000))")
        let rows = try await applied(url)
        #expect(rows.count == 600)
        #expect(rows.map(\.0) == Array(1...600).map(Int64.init))
        #expect(Set(rows.map(\.1)) == Set(1...600))
        await consumer2.terminate()
        await producer.terminate()
    }

    @Test("migrations applied twice are a no-op")
    func migrationsTwice() async throws {
        let url = try await TestDatabase.create("migrate")
        try await withDatabase(url: url, schema: "twice") { db in
            let migrations = [Migration(1, "a", ["CREATE TABLE a (x int)"]), Migration(2, "b", ["CREATE TABLE b (y int)", "INSERT INTO b VALUES (1)"])]
            let first = try await Migrator(database: db).migrate(migrations)
            let second = try await Migrator(database: db).migrate(migrations)
            #expect(first == [1, 2])
            #expect(second == [])
            #expect(try await db.query("SELECT count(*)::int FROM b").first(Int.self) == 1)
            // An edited, already applied migration is reported.
            await #expect(throws: Migrator.Failure.self) {
                try await Migrator(database: db).migrate([Migration(1, "a", ["CREATE TABLE a (x bigint)"])])
            }
        }
    }

    @Test("concurrent migrators serialize on the advisory lock")
    func concurrentMigrators() async throws {
        let url = try await TestDatabase.create("migrate")
        let migrations = [Migration(1, "slow", ["CREATE TABLE s (x int)", "SELECT pg_sleep(0.3)", "INSERT INTO s VALUES (1)"])]
        try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<3 {
                group.addTask { try await withDatabase(url: url, schema: "race") { try await Migrator(database: $0).migrate(migrations) } }
            }
            var applied: [[Int]] = []
            for try await r in group { applied.append(r) }
            #expect(applied.filter { $0 == [1] }.count == 1)
            #expect(applied.filter { $0.isEmpty }.count == 2)
        }
    }
}
