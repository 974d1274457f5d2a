import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO
import Support
import Testing

/// The outbox's retention (`CHRONIR_OUTBOX_RETENTION`, swept every
/// `CHRONIR_OUTBOX_CLEANUP_INTERVAL`) and what a consumer does when the events it needs are
/// gone: `events.replay` answers with `firstAvailable` past them, and `StreamConsumer.catchUp`
/// skips to just before it ("events lost past the producer's retention; skipping",
/// `EventApplier.skip`), then applies what is kept, once. Real producer and consumer processes
/// (the test peer), a real PostgreSQL, real sockets.
@Suite("Outbox retention and replay past it", .serialized)
struct OutboxRetentionTests {
    /// A producer's environment on fresh ports (returned for its consumer).
    func producerEnvironment(_ url: String, _ extra: [String: String] = [:]) -> (env: [String: String], rpc: Int, pub: Int) {
        let (rpc, pub) = (freePort(), freePort())
        let env = ["DATABASE_URL": url, "CHRONIR_RPC_BIND": "tcp://127.0.0.1:\(rpc)", "CHRONIR_PUB_BIND": "tcp://127.0.0.1:\(pub)",
                   "CHRONIR_BUS_KEYS": TestBusKeys.directory, "CHRONIR_OUTBOX_POLL": "100ms", "CHRONIR_OUTBOX_HEARTBEAT": "300ms"]
        return (env.merging(extra) { $1 }, rpc, pub)
    }


    @Test("published rows older than the retention are deleted; a consumer that needs them skips to firstAvailable and applies the rest once")
    func replayPastRetention() async throws {
        let url = try await TestDatabase.create("retention")

        // 1. Five events, published, then deleted by the retention sweep (kept 1 s, swept every 200 ms).
        let short = try TestProcess("chronir-testpeer", ["produce", "--count", "5"],
                                    environment: producerEnvironment(url, ["CHRONIR_OUTBOX_RETENTION": "1s",
                                                                           "CHRONIR_OUTBOX_CLEANUP_INTERVAL": "200ms"]).env,
                                    label: "producer-short-retention")
        #expect(await short.waitForOutput("appended 5 events", timeout: .seconds(60)), "\(short.output.suffix(2000))")
        let numbered = await eventually(timeout: .seconds(20)) {
            await scalar(url, "producer", "SELECT last_seq::int FROM outbox_streams WHERE stream = 'producer'") == 5
        }
        #expect(numbered, "the 5 events were not numbered: \(short.output.suffix(2000))")
        // Retention: every published row goes once it is older than 1 s; the head stays.
        let swept = await eventually(timeout: .seconds(20)) {
            await scalar(url, "producer", "SELECT count(*)::int FROM outbox") == 0
        }
        #expect(swept, "published rows older than the retention were not deleted: \(short.output.suffix(2000))")
        #expect(await scalar(url, "producer", "SELECT last_seq::int FROM outbox_streams WHERE stream = 'producer'") == 5)
        #expect(await short.terminate() == 0, "\(short.output.suffix(2000))")

        // 2. Three more events, kept (the default retention): sequence numbers 6, 7, 8.
        let kept = producerEnvironment(url)
        let producer = try TestProcess("chronir-testpeer", ["produce", "--count", "3"], environment: kept.env, label: "producer")
        #expect(await producer.waitForOutput("appended 3 events", timeout: .seconds(60)), "\(producer.output.suffix(2000))")
        let published = await eventually(timeout: .seconds(20)) {
            await scalar(url, "producer", "SELECT last_seq::int FROM outbox_streams WHERE stream = 'producer'") == 8
        }
        #expect(published, "\(producer.output.suffix(2000))")
        let keptIDs = try await withDatabase(url: url, schema: "producer") { db in
            try await db.query("SELECT event_id FROM outbox WHERE stream = 'producer' ORDER BY seq").all(String.self)
        }
        #expect(keptIDs.count == 3)

        // 3. The documented answer to a replay from before what is kept: the head, the oldest
        // kept sequence number, and the kept events only (OutboxReplay, as `events.replay` runs it).
        let batch = try await withDatabase(url: url, schema: "producer") { db in
            try await OutboxReplay.replay(database: db, stream: "producer", after: 0, limit: 100)
        }
        #expect(batch.head == 8)
        #expect(batch.firstAvailable == 6)
        #expect(batch.events.map(\.seq) == [6, 7, 8])

        // 4. A new consumer (checkpoint 0) catches up: it cannot have 1…5, so it records the skip
        // and applies 6…8 exactly once.
        let consumer = try TestProcess("chronir-testpeer", ["consume"], environment: [
            "DATABASE_URL": url, "PEER_RPC": "tcp://127.0.0.1:\(kept.rpc)", "PEER_EVENTS": "tcp://127.0.0.1:\(kept.pub)",
            "CHRONIR_BUS_KEYS": TestBusKeys.directory, "CHRONIR_LOG_LEVEL": "info",
        ], label: "consumer-past-retention")
        // The positive marker: the consumer's stored checkpoint reached the producer's head.
        let caughtUp = await eventually(timeout: .seconds(30)) {
            await scalar(url, "consumer", "SELECT seq::int FROM consumer_checkpoints WHERE stream = 'producer'") == 8
        }
        #expect(caughtUp, "the consumer did not get past the events lost to retention: \(consumer.output.suffix(3000))")
        #expect(consumer.output.contains("events lost past the producer's retention; skipping"), "\(consumer.output.suffix(3000))")
        let applied = try await withDatabase(url: url, schema: "consumer") { db in
            var out: [(Int64, String)] = []
            let rows = try await db.query("SELECT seq, event_id FROM applied ORDER BY seq")
            for try await (seq, id) in rows.decode((Int64, String).self) { out.append((seq, id)) }
            return out
        }
        #expect(applied.map(\.0) == [6, 7, 8], "applied: \(applied)")
        #expect(applied.map(\.1) == keptIDs, "the consumer applied other events than the ones kept")
        #expect(await scalar(url, "consumer", "SELECT count(*)::int FROM consumer_dead_letters") == 0)

        #expect(await consumer.terminate() == 0, "\(consumer.output.suffix(2000))")
        await producer.terminate()
    }
}
