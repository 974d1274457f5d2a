import Foundation
import Messaging
import Persistence
import PostgresNIO
import Support
import Testing

/// A producer whose database went back (issue 58): a restore, a failover to an asynchronous
/// standby, commits lost with `synchronous_commit=off`. Its next events reuse numbers the
/// consumer has applied; before, the consumer dropped them as duplicates, silently, lag 0.
/// Now it stops and alerts; an operator's new checkpoint lets it go on. Real processes.
@Suite("Rewound streams", .serialized)
struct StreamRewindTests {

    @Test("the producer loses events 5…10 the consumer applied and numbers new ones from 5: the consumer stops and says so; set back to 4, it applies the new ones once")
    func rewoundProducerStopsConsumer() async throws {
        let url = try await TestDatabase.create("rewind")
        let (rpc, pub) = (freePort(), freePort())
        let producerEnv = ["DATABASE_URL": url, "CHRONIR_RPC_BIND": "tcp://127.0.0.1:\(rpc)", "CHRONIR_PUB_BIND": "tcp://127.0.0.1:\(pub)",
                           "CHRONIR_BUS_KEYS": TestBusKeys.directory, "CHRONIR_OUTBOX_POLL": "100ms", "CHRONIR_OUTBOX_HEARTBEAT": "300ms"]
        let first = try TestProcess("chronir-testpeer", ["produce", "--count", "10"], environment: producerEnv, label: "producer-before")
        #expect(await first.waitForOutput("appended 10 events", timeout: .seconds(60)), "\(first.output.suffix(2000))")
        let consumer = try TestProcess("chronir-testpeer", ["consume"], environment: [
            "DATABASE_URL": url, "PEER_RPC": "tcp://127.0.0.1:\(rpc)", "PEER_EVENTS": "tcp://127.0.0.1:\(pub)",
            "CHRONIR_BUS_KEYS": TestBusKeys.directory, "CHRONIR_LOG_LEVEL": "info",
        ], label: "consumer-rewind")
        let checkpoint = "SELECT seq::int FROM consumer_checkpoints WHERE stream = 'producer'"
        #expect(await eventually(timeout: .seconds(30)) { await scalar(url, "consumer", checkpoint) == 10 }, "\(consumer.output.suffix(3000))")
        #expect(await first.terminate() == 0)

        // The producer's database goes back to before event 5 (what a restore would leave).
        try await withDatabase(url: url, schema: "producer") { db in
            try await db.query("DELETE FROM outbox WHERE seq > 4")
            try await db.query("UPDATE outbox_streams SET last_seq = 4 WHERE stream = 'producer'")
        }
        let second = try TestProcess("chronir-testpeer", ["produce", "--count", "3"], environment: producerEnv, label: "producer-after")
        #expect(await second.waitForOutput("appended 3 events", timeout: .seconds(60)), "\(second.output.suffix(2000))")
        // New events 5, 6, 7 exist; the consumer must neither apply them as if nothing happened
        // nor drop them: it stops and says why.
        let stopped = await eventually(timeout: .seconds(20)) { consumer.output.contains("the producer's stream went back") }
        #expect(stopped, "the consumer did not notice the rewind: \(consumer.output.suffix(3000))")
        try await Task.sleep(for: .seconds(1))
        #expect(await scalar(url, "consumer", "SELECT count(*)::int FROM applied") == 10, "the consumer applied events of the new history")

        // The operator decides: the consumer's effects of 5…10 stand, and it goes on from 4.
        try await withDatabase(url: url, schema: "consumer") { db in
            try await db.query("UPDATE consumer_checkpoints SET seq = 4 WHERE stream = 'producer'")
        }
        let resumed = await eventually(timeout: .seconds(20)) { await scalar(url, "consumer", checkpoint) == 7 }
        #expect(resumed, "\(consumer.output.suffix(3000))")
        #expect(consumer.output.contains("consumer running again"), "\(consumer.output.suffix(3000))")
        #expect(await scalar(url, "consumer", "SELECT count(*)::int FROM applied") == 13, "each new event once, after the 10 of before")
        #expect(await consumer.terminate() == 0, "\(consumer.output.suffix(2000))")
        await second.terminate()
    }
}
