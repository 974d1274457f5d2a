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
        let done = await eventually(timeout: .seconds(60)) { await appliedCount(url) >= 1000 }
        #expect(done, "consumer log: \(consumer2.output.suffix(2000))")
        try await Task.sleep(for: .milliseconds(1500)) // a heartbeat or two: nothing more may arrive
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

    @Test("a producer killed between commit and publish loses nothing: the relay publishes on restart")
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
        let done = await eventually(timeout: .seconds(60)) { await appliedCount(url) >= 500 }
        #expect(done, "consumer log: \(consumer.output.suffix(2000))")
        // Kill -9 the consumer mid-stream, produce more, restart: still exactly once.
        consumer.kill9()
        let more = try TestProcess("chronir-testpeer", ["produce", "--count", "100"],
                                   environment: Ports().producerEnv.merging(["DATABASE_URL": url]) { $1 }, label: "more")
        #expect(await more.waitForOutput("appended 100 events", timeout: .seconds(60)))
        await more.terminate()
        let consumer2 = try TestProcess("chronir-testpeer", ["consume"], environment: env, label: "consumer2")
        let all = await eventually(timeout: .seconds(60)) { await appliedCount(url) >= 600 }
        #expect(all, "consumer log: \(consumer2.output.suffix(2000))")
        try await Task.sleep(for: .milliseconds(1500))
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
