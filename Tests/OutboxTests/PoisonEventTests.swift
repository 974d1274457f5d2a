import Foundation
import Messaging
import Persistence
import Support
import Testing

/// An event whose handler fails the same way every time (issue 58: "a poison event blocks its
/// stream for ever"): PostgreSQL refuses what the handler writes. The consumer tries it
/// `CHRONIR_POISON_ATTEMPTS` times, records it as a dead letter and goes on; once the cause is
/// fixed an operator replays it, and every event is applied once. Real producer and consumer
/// processes (`chronir-testpeer`), real PostgreSQL.
@Suite("Poison events", .serialized)
struct PoisonEventTests {
    let d = DurabilityTests()

    @Test("an event the database refuses is dead-lettered after its attempts and the stream goes on; replayed once fixed")
    func poisonDeadLettered() async throws {
        var peer = RollingUpgradeTests.Peer(url: try await TestDatabase.create("poison"))
        peer.extraConsumerEnv = ["CHRONIR_POISON_ATTEMPTS": "3"]
        let consumer = try peer.consume(reads: 1, label: "consumer")
        #expect(await consumer.waitForOutput("consumer ready"))
        // A rule the handler's insert breaks for one event: the 50th.
        try await withDatabase(url: peer.url, schema: "consumer") { db in
            try await db.query("ALTER TABLE applied ADD CONSTRAINT not_fifty CHECK (n <> 50)")
        }
        let producer = try TestProcess("chronir-testpeer", ["produce", "--count", "100"], environment: peer.producerEnv, label: "producer")
        #expect(await d.caughtUp(peer.url, head: 100), "the stream stopped behind the poison event: \(consumer.output.suffix(2000))")
        let rows = try await d.applied(peer.url).map { Int($0.0) }
        #expect(rows.sorted() == Array(1...49) + Array(51...100))
        #expect(consumer.output.contains("retrying before it is dead-lettered"))

        let (client, context) = try peer.operatorClient()
        let letters = try await client.call(SystemMethods.DeadLetters.self, .init(stream: "producer"))
        #expect(letters.deadLetters.map(\.seq) == [50])
        #expect(letters.deadLetters.first?.reason.contains("failed 3 times") == true, "\(letters.deadLetters)")
        #expect(letters.deadLetters.first?.reason.contains("23514") == true, "the reason names the refusal: \(letters.deadLetters)")
        // Fixed, the operator replays it: applied once, nothing else twice.
        try await withDatabase(url: peer.url, schema: "consumer") { db in
            try await db.query("ALTER TABLE applied DROP CONSTRAINT not_fifty")
        }
        _ = try await client.call(SystemMethods.DeadLetterReplay.self, .init(stream: "producer", seq: 50))
        try await RollingUpgradeTests().checkRows(peer.url, expected: Array(1...100))
        #expect(try await client.call(SystemMethods.DeadLetters.self, .init()).deadLetters.isEmpty)
        await client.close()
        context.terminate()
        await consumer.terminate()
        await producer.terminate()
    }
}
