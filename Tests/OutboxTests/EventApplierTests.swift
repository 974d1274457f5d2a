import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO
import Support
import Testing

/// `PostgresEventApplier` against a real PostgreSQL: deliveries of unhandled events move the
/// checkpoint in memory only, and it reaches the database with the next transaction, at a pause
/// once a second old, or once too many events have passed; replicas sharing the checkpoint
/// still apply each event once.
@Suite("Event applier checkpoints", .serialized)
struct EventApplierTests {
    static let stream = "peer"

    static func events(_ seqs: ClosedRange<Int64>, type: String) -> [DeliveredEvent] {
        seqs.map { DeliveredEvent(seq: $0, envelope: Envelope(type: type, source: "peer/1", payload: Data("{}".utf8))) }
    }

    static func applier(_ db: Database, maxUnwritten: Int64 = 5000) -> PostgresEventApplier {
        var handlers = EventHandlers(PeerEvents.self)
        handlers.ignore(PeerEvents.ignored)
        handlers.onBatch([PeerEvents.handled]) { run, c in
            for ctx in run { try await c.query("INSERT INTO applied (seq) VALUES (\(ctx.event.seq))", logger: ctx.logger) }
        }
        return PostgresEventApplier(database: db, handlers: handlers, telemetry: .discarding(), consumerName: "test", maxUnwritten: maxUnwritten)
    }

    static func stored(_ db: Database) async throws -> Int64 {
        try await db.query("SELECT seq FROM consumer_checkpoints WHERE stream = \(stream)").first(Int64.self) ?? 0
    }

    static func appliedSeqs(_ db: Database) async throws -> [Int64] {
        var out: [Int64] = []
        for try await seq in try await db.query("SELECT seq FROM applied ORDER BY seq").decode(Int64.self) { out.append(seq) }
        return out
    }

    @Test("unhandled deliveries cost no transaction; the checkpoint is written with the next one, at a settled pause, or after maxUnwritten events")
    func unhandledRunsAreWrittenLater() async throws {
        let url = try await TestDatabase.create("applier")
        try await withDatabase(url: url, schema: "consumer") { db in
            _ = try await Migrator(database: db).migrate([OutboxSchema.migration, Migration(2, "applied", ["CREATE TABLE applied (seq bigint PRIMARY KEY)"])])
            let a = Self.applier(db, maxUnwritten: 10)
            try await a.apply(stream: Self.stream, events: Self.events(1...3, type: "peer.ignored"))
            #expect(try await Self.stored(db) == 0, "nothing handled: no write")
            try await a.settle(stream: Self.stream)
            #expect(try await Self.stored(db) == 0, "a run younger than a second is not settled")

            // A handled event follows the run kept in memory: one transaction writes through it.
            try await a.apply(stream: Self.stream, events: Self.events(4...4, type: "peer.handled"))
            #expect(try await Self.stored(db) == 4)
            #expect(try await Self.appliedSeqs(db) == [4])

            // A pause a second later writes the run.
            try await a.apply(stream: Self.stream, events: Self.events(5...6, type: "peer.ignored"))
            #expect(try await Self.stored(db) == 4)
            try await Task.sleep(for: .milliseconds(1100))
            try await a.settle(stream: Self.stream)
            #expect(try await Self.stored(db) == 6)

            // Ten events past the stored checkpoint are written at once.
            try await a.apply(stream: Self.stream, events: Self.events(7...12, type: "peer.ignored"))
            #expect(try await Self.stored(db) == 6)
            try await a.apply(stream: Self.stream, events: Self.events(13...16, type: "peer.ignored"))
            #expect(try await Self.stored(db) == 16)

            // A dead letter after a run kept in memory is accepted and writes through it.
            try await a.apply(stream: Self.stream, events: Self.events(17...18, type: "peer.ignored"))
            try await a.deadLetter(stream: Self.stream, seq: 19, type: "peer.handled", raw: "{}", reason: "test")
            #expect(try await Self.stored(db) == 19)

            // A fresh applier (a restart before the write) starts from the stored checkpoint.
            try await a.apply(stream: Self.stream, events: Self.events(20...21, type: "peer.ignored"))
            #expect(try await Self.applier(db).checkpoint(stream: Self.stream) == 19)
        }
    }

    @Test("replicas sharing a checkpoint: one applies the handled event, the other sees the checkpoint moved and its late settle writes nothing")
    func replicasShareTheCheckpoint() async throws {
        let url = try await TestDatabase.create("applier")
        try await withDatabase(url: url, schema: "consumer") { db in
            _ = try await Migrator(database: db).migrate([OutboxSchema.migration, Migration(2, "applied", ["CREATE TABLE applied (seq bigint PRIMARY KEY)"])])
            let a = Self.applier(db), b = Self.applier(db)
            try await a.apply(stream: Self.stream, events: Self.events(1...2, type: "peer.ignored"))
            try await b.apply(stream: Self.stream, events: Self.events(1...2, type: "peer.ignored"))
            try await b.apply(stream: Self.stream, events: Self.events(3...3, type: "peer.handled"))
            #expect(try await Self.stored(db) == 3)
            await #expect(throws: CheckpointMoved.self) {
                try await a.apply(stream: Self.stream, events: Self.events(3...3, type: "peer.handled"))
            }
            #expect(try await Self.appliedSeqs(db) == [3], "applied once")

            // A run kept in memory that another replica has gone past is not written back.
            try await a.apply(stream: Self.stream, events: Self.events(4...5, type: "peer.ignored"))
            try await b.apply(stream: Self.stream, events: Self.events(4...7, type: "peer.handled"))
            try await Task.sleep(for: .milliseconds(1100))
            try await a.settle(stream: Self.stream)
            #expect(try await Self.stored(db) == 7)
            #expect(try await Self.appliedSeqs(db) == [3, 4, 5, 6, 7])
        }
    }
}

/// The test stream's catalogue: one type handled, one not.
enum PeerEvents: EventCatalogue {
    static let stream = "peer"
    static let handled = TypedEvent<Empty>("peer.handled")
    static let ignored = TypedEvent<Empty>("peer.ignored")
    static let all: [any EventType] = [handled, ignored]
}
