import AsyncHTTPClient
import Foundation
import Messaging
import Persistence
import PostgresNIO
import Support
import Testing
import ZMQ

/// Deploying one service at a time (issue 39): a consumer of the previous release meets a
/// version or a type it does not know, stops there (checkpoint kept, `/readyz` 503), and after
/// its upgrade, or an operator's skip, catches up with every event exactly once. Real producer
/// and consumer processes (`chronir-testpeer`), real PostgreSQL and sockets.
@Suite("Rolling upgrades", .serialized)
struct RollingUpgradeTests {
    let d = DurabilityTests()

    struct Peer {
        let ports = DurabilityTests.Ports()
        let ops = freePort()
        let rpc = freePort()
        let url: String
        /// More of the consumer's environment.
        var extraConsumerEnv: [String: String] = [:]

        var consumerEnv: [String: String] {
            ports.consumerEnv.merging(["DATABASE_URL": url, "PEER_OPS_PORT": "\(ops)", "PEER_CONSUMER_RPC": "tcp://127.0.0.1:\(rpc)"]) { $1 }
                .merging(extraConsumerEnv) { $1 }
        }
        var producerEnv: [String: String] { ports.producerEnv.merging(["DATABASE_URL": url]) { $1 } }

        func consume(reads: Int, label: String) throws -> TestProcess {
            try TestProcess("chronir-testpeer", ["consume", "--reads", "\(reads)"], environment: consumerEnv, label: label)
        }

        /// Appends events and exits; the running producer's relay publishes them.
        func append(_ count: Int, _ extra: [String] = []) async throws {
            // Ports of its own: the running producer holds the stream's.
            let env = DurabilityTests.Ports().producerEnv.merging(["DATABASE_URL": url]) { $1 }
            let p = try TestProcess("chronir-testpeer", ["produce", "--count", "\(count)", "--no-relay"] + extra,
                                    environment: env, label: "append")
            #expect(await p.waitForExit(timeout: .seconds(60)) == 0, "append log: \(p.output.suffix(1000))")
        }

        /// The consumer's `/readyz`: status and body.
        func readyz() async -> (Int, String) {
            do {
                let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(ops)/readyz"), timeout: .seconds(2))
                let body = try await response.body.collect(upTo: 1 << 20)
                return (Int(response.status.code), String(buffer: body))
            } catch {
                return (0, "\(error)")
            }
        }

        /// A client of the consumer's requests with the operator's key.
        func operatorClient() throws -> (RPCClient, ZMQContext) {
            let context = try TestBusKeys.context(BusPolicy.operatorPrincipal)
            let client = try RPCClient(context: context, target: "consumer", endpoints: ["tcp://127.0.0.1:\(rpc)"], source: "operator/test",
                                       telemetry: .discarding())
            return (client, context)
        }
    }

    /// Every row once, seq and n equal, exactly `expected`.
    func checkRows(_ url: String, expected: [Int]) async throws {
        let rows = try await d.applied(url)
        let seqs = rows.map { Int($0.0) }
        #expect(seqs.count == Set(seqs).count, "duplicated: \(seqs.count - Set(seqs).count)")
        let lost = Set(expected).subtracting(seqs), unexpected = Set(seqs).subtracting(expected)
        #expect(lost.isEmpty && unexpected.isEmpty, "lost \(lost.count) (first \(lost.sorted().prefix(5))), unexpected \(unexpected.count) (first \(unexpected.sorted().prefix(5)))")
        #expect(rows.allSatisfy { $0.0 == Int64($0.1) })
    }

    @Test("a consumer of the previous release stops at a newer event version, keeps its place and readiness says so; upgraded, it applies every event once")
    func versionBumpBlocksThenUpgradeCatchesUp() async throws {
        let peer = Peer(url: try await TestDatabase.create("upgrade"))
        let old = try peer.consume(reads: 1, label: "consumer-v1")
        #expect(await old.waitForOutput("consumer ready"))
        let producer = try TestProcess("chronir-testpeer", ["produce", "--count", "500"], environment: peer.producerEnv, label: "producer")
        #expect(await d.caughtUp(peer.url, head: 500), "consumer log: \(old.output.suffix(2000))")
        #expect(await peer.readyz().0 == 200)

        // The producer is upgraded first (against the rule): 500 events of version 2, then 200
        // of version 1 again. The old consumer must not skip the first, nor apply what follows.
        try await peer.append(500, ["--version", "2"])
        try await peer.append(200)
        #expect(await eventually(timeout: .seconds(30)) { await peer.readyz().0 == 503 }, "consumer log: \(old.output.suffix(2000))")
        let blockedAt = ContinuousClock.now
        let (status, body) = await peer.readyz()
        #expect(status == 503)
        #expect(body.contains("blocked: producer at 501 (producer.numbered v2)"), "\(body)")
        #expect(old.output.contains("consumer stopped at an event this build cannot handle"))
        try await Task.sleep(for: .seconds(1))
        #expect(await d.checkpoint(peer.url) == 500, "the checkpoint stays before the event it cannot handle")
        #expect(await d.appliedCount(peer.url) == 500)

        // The upgrade: the same consumer, next release.
        #expect(await old.terminate() == 0)
        let blocked = blockedAt.duration(to: .now)
        let upgradedAt = ContinuousClock.now
        let new = try peer.consume(reads: 2, label: "consumer-v2")
        #expect(await eventually(timeout: .seconds(60)) { await d.checkpoint(peer.url) == 1200 }, "consumer log: \(new.output.suffix(2000))")
        let catchUp = upgradedAt.duration(to: .now)
        #expect(await eventually(timeout: .seconds(10)) { await peer.readyz().0 == 200 })
        try await checkRows(peer.url, expected: Array(1...1200))
        print("rolling upgrade: 1200 events, lost 0, duplicated 0 (checked above); blocked \(blocked) until the upgrade; the upgraded consumer applied 700 events in \(catchUp)")
        await new.terminate()
        await producer.terminate()
    }

    @Test("an operator skips an event of an unknown type: kept as a dead letter, the consumer goes on; after the upgrade the dead letter is replayed once")
    func unknownTypeSkippedThenReplayed() async throws {
        let peer = Peer(url: try await TestDatabase.create("upgrade"))
        let old = try peer.consume(reads: 1, label: "consumer-v1")
        #expect(await old.waitForOutput("consumer ready"))
        let producer = try TestProcess("chronir-testpeer", ["produce", "--count", "100"], environment: peer.producerEnv, label: "producer")
        #expect(await d.caughtUp(peer.url, head: 100))
        try await peer.append(1, ["--type", "noted"])
        try await peer.append(100)
        #expect(await eventually(timeout: .seconds(30)) { await peer.readyz().0 == 503 }, "consumer log: \(old.output.suffix(2000))")
        #expect(await peer.readyz().1.contains("blocked: producer at 101 (producer.noted v1)"))

        let (client, context) = try peer.operatorClient()
        // Only the event the consumer is stopped at can be skipped, and only with a reason.
        await #expect(throws: ServiceError.self) {
            try await client.call(SystemMethods.ConsumerSkip.self, .init(stream: "producer", seq: 102, reason: "wrong one"))
        }
        await #expect(throws: ServiceError.self) {
            try await client.call(SystemMethods.ConsumerSkip.self, .init(stream: "producer", seq: 101, reason: " "))
        }
        _ = try await client.call(SystemMethods.ConsumerSkip.self, .init(stream: "producer", seq: 101, reason: "unknown type during the rollout"))
        #expect(await d.caughtUp(peer.url, head: 201), "consumer log: \(old.output.suffix(2000))")
        #expect(await eventually(timeout: .seconds(10)) { await peer.readyz().0 == 200 })
        try await checkRows(peer.url, expected: Array(1...100) + Array(102...201))
        let letters = try await client.call(SystemMethods.DeadLetters.self, .init(stream: "producer"))
        #expect(letters.deadLetters.map(\.seq) == [101])
        #expect(letters.deadLetters.first?.type == "producer.noted")
        #expect(letters.deadLetters.first?.reason == "skipped by an operator: unknown type during the rollout")
        // The old build still cannot apply it.
        await #expect(throws: ServiceError.self) {
            try await client.call(SystemMethods.DeadLetterReplay.self, .init(stream: "producer", seq: 101))
        }
        #expect(await old.terminate() == 0)

        let new = try peer.consume(reads: 2, label: "consumer-v2")
        #expect(await new.waitForOutput("consumer ready"))
        #expect(await eventually(timeout: .seconds(20)) {
            (try? await client.call(SystemMethods.DeadLetterReplay.self, .init(stream: "producer", seq: 101))) != nil
        }, "consumer log: \(new.output.suffix(2000))")
        try await checkRows(peer.url, expected: Array(1...201))
        #expect(try await client.call(SystemMethods.DeadLetters.self, .init()).deadLetters.isEmpty)
        await #expect(throws: ServiceError.self) {
            try await client.call(SystemMethods.DeadLetterDrop.self, .init(stream: "producer", seq: 101))
        }
        await client.close()
        context.terminate()
        await new.terminate()
        await producer.terminate()
    }

    @Test("a service refuses to start on a database a newer release migrated, saying why")
    func newerSchemaRefused() async throws {
        let peer = Peer(url: try await TestDatabase.create("upgrade"))
        let first = try peer.consume(reads: 1, label: "first")
        #expect(await first.waitForOutput("consumer ready"))
        #expect(await first.terminate() == 0)
        try await withDatabase(url: peer.url, schema: "consumer") { db in
            try await db.query("INSERT INTO schema_migrations (version, name, checksum) VALUES (3, 'from a newer release', 'x')")
        }
        let again = try peer.consume(reads: 1, label: "again")
        let status = await again.waitForExit(timeout: .seconds(30))
        #expect(status != 0 && status != nil)
        #expect(again.output.contains("schema consumer is at migration 3, newer than this build knows (2)"), "\(again.output.suffix(2000))")
        #expect(!again.output.contains("consumer ready"))
    }
}
