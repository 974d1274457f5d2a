import Foundation
import Messaging
@testable import Outbox
import Persistence
import PostgresNIO
import Support
import Synchronization
import Testing

/// Events numbered by their transaction's last statement (``EventsAtCommit``): numbers follow
/// commit order with no gaps, and the relay sends its process's rows in order by reading them.
@Suite("Outbox: events numbered at commit", .serialized)
struct NumberedAtCommitTests {
    typealias Captured = RelayBodyCacheTests.Captured

    /// What the reader of ``denseInEverySnapshot()`` saw.
    final class Probe: Sendable {
        let writing = Atomic<Bool>(true)
        let holes = Atomic<Int>(0)
        let reads = Atomic<Int>(0)
    }

    static func envelopes(_ range: ClosedRange<Int>) -> [Envelope] { RelayBodyCacheTests.envelopes(range) }

    static func rows(_ db: Database) async throws -> [(seq: Int64?, n: Int)] {
        let stored = try await db.query("SELECT seq, envelope FROM outbox ORDER BY id").decode((Int64?, String).self)
        var out: [(seq: Int64?, n: Int)] = []
        for try await (seq, envelope) in stored {
            let e = try Envelope.decode(Data(envelope.utf8))
            out.append((seq, (try JSONSerialization.jsonObject(with: e.payload) as! [String: Int])["n"]!))
        }
        return out
    }

    @Test("rows are numbered when they commit, the relay sends them from memory in order, and a rollback leaves no gap")
    func numberedAndSent() async throws {
        let url = try await TestDatabase.create("atcommit")
        try await withDatabase(url: url, schema: "producer") { db in
            _ = try await Migrator(database: db).migrate([OutboxSchema.migration])
            let sink = Captured()
            let relay = OutboxRelay(database: db, stream: "peer", sink: sink, telemetry: .discarding(), batchSize: 4)
            let writer = OutboxWriter(stream: "peer", source: "peer/1", telemetry: .discarding(), database: db, relay: relay)
            // Two appends in one transaction (a consumer's batch): one statement numbers both, in order.
            try await db.transaction { c in
                try await writer.append(Self.envelopes(1...2), on: c)
                // Interpolated in a statement of the transaction: that statement inserts nothing.
                try await c.prepared("WITH events AS (\(outboxInsert: writer.rows(Self.envelopes(3...3)))) SELECT 1", logger: db.logger)
                // Not yet in the table: the transaction's last statement writes them.
                #expect(try await c.query("SELECT count(*)::int FROM outbox", logger: db.logger).first(Int.self) == 0)
            }
            #expect(try await Self.rows(db).map(\.seq) == [1, 2, 3])
            #expect(try await Self.rows(db).map(\.n) == [1, 2, 3])
            struct Abort: Error {}
            await #expect(throws: Abort.self) {
                try await db.transaction { c in
                    try await writer.append(Self.envelopes(100...101), on: c)
                    throw Abort()
                }
            }
            try await db.transaction { c in try await writer.append(Self.envelopes(4...9), on: c) }
            #expect(try await Self.rows(db).map(\.seq) == (1...9).map(Int64.init), "the rollback took its numbers back")
            #expect(try await db.query("SELECT last_seq FROM outbox_streams").first(Int64.self) == 9)

            while try await relay.relayBatch() > 0 {}
            let out = RelayBodyCacheTests.published(sink)
            #expect(out.map(\.seq) == (1...9).map(Int64.init))
            #expect(out.map(\.n) == Array(1...9))
            // The rolled-back envelopes are still remembered (they age out); the sent ones were taken.
            #expect(relay.bodies.count == 2)
            // Byte for byte the rows' envelopes.
            let stored = try await db.query("SELECT envelope FROM outbox ORDER BY seq").decode(String.self)
            var i = 0
            for try await envelope in stored {
                #expect(sink.events.withLock { $0[i].envelope } == Data(envelope.utf8))
                i += 1
            }
            #expect(i == 9)
        }
    }

    @Test("every relay sends every row in order (its own from memory, a replica's read back); unnumbered rows (REPEATABLE READ, an older writer) are numbered first and sent in turn")
    func otherWritersAndUnnumberedRows() async throws {
        let url = try await TestDatabase.create("atcommitmixed")
        try await withDatabase(url: url, schema: "producer") { db in
            _ = try await Migrator(database: db).migrate([OutboxSchema.migration])
            let sink = Captured()
            let relay = OutboxRelay(database: db, stream: "peer", sink: sink, telemetry: .discarding())
            let writer = OutboxWriter(stream: "peer", source: "peer/1", telemetry: .discarding(), database: db, relay: relay)
            // A replica: numbers at commit; its own relay (absent here) would send its rows too.
            let replica = OutboxWriter(stream: "peer", source: "peer/2", telemetry: .discarding(), database: db, relay: nil)
            // An older build during a rolling upgrade: leaves numbering to a relay.
            let older = OutboxWriter(stream: "peer", source: "peer/3", telemetry: .discarding(), database: db, relay: nil, numbersAtCommit: false)

            try await db.transaction { c in try await writer.append(Self.envelopes(1...2), on: c) }
            try await db.transaction { c in try await replica.append(Self.envelopes(3...3), on: c) }
            try await db.transaction { c in try await older.append(Self.envelopes(4...4), on: c) }
            try await db.transaction(isolation: .repeatableRead) { c in try await writer.append(Self.envelopes(5...5), on: c) }
            try await db.transaction { c in try await writer.append(Self.envelopes(6...6), on: c) }
            let before = try await Self.rows(db)
            #expect(before.map(\.seq) == [1, 2, 3, nil, nil, 4])
            #expect(before.map(\.n) == [1, 2, 3, 4, 5, 6])

            // What the envelopes in the table say, behind the relay's back: event 2 (in memory)
            // goes out as committed, event 3 (the replica's) as read back.
            try await db.query("UPDATE outbox SET envelope = replace(envelope, '{\"n\":2}', '{\"n\":200}') WHERE seq = 2")
            try await db.query("UPDATE outbox SET envelope = replace(envelope, '{\"n\":3}', '{\"n\":300}') WHERE seq = 3")
            while try await relay.relayBatch() > 0 {}
            let out = RelayBodyCacheTests.published(sink)
            #expect(out.map(\.seq) == [1, 2, 3, 4, 5, 6])
            #expect(out.map(\.n) == [1, 2, 300, 6, 4, 5])
            let after = try await Self.rows(db)
            #expect(after.map(\.seq) == [1, 2, 3, 5, 6, 4])
            #expect(try await db.query("SELECT count(*)::int FROM outbox WHERE seq IS NULL").first(Int.self) == 0)
            #expect(relay.bodies.count == 0, "every remembered envelope was taken")
        }
    }

    /// As production runs it (issue 58: this ran with no relay and with the test server's
    /// `synchronous_commit=off`): a relay sending from memory while the writers commit, and each
    /// commit waiting for its WAL flush, so the lock on the stream row is released only after it.
    @Test("under concurrent writers a reader never sees a number committed before a lower one: the numbers are dense in every snapshot, and the relay sends them in order")
    func denseInEverySnapshot() async throws {
        let url = try await TestDatabase.create("atcommitdense")
        try await withDatabase(url: url, schema: "producer") { db in
            _ = try await Migrator(database: db).migrate([OutboxSchema.migration])
            let sink = Captured()
            let relay = OutboxRelay(database: db, stream: "peer", sink: sink, telemetry: .discarding(), batchSize: 16)
            let writer = OutboxWriter(stream: "peer", source: "peer/1", telemetry: .discarding(), database: db, relay: relay)
            let probe = Probe()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    while probe.writing.load(ordering: .relaxed) {
                        // count == max means every number up to the highest one seen is there.
                        for try await (count, max) in try await db.query("SELECT count(*)::int8, coalesce(max(seq), 0)::int8 FROM outbox")
                            .decode((Int64, Int64).self) where count != max {
                            probe.holes.add(1, ordering: .relaxed)
                        }
                        probe.reads.add(1, ordering: .relaxed)
                    }
                }
                group.addTask {
                    while probe.writing.load(ordering: .relaxed) {
                        if try await relay.relayBatch() == 0 { try await Task.sleep(for: .milliseconds(2)) }
                    }
                }
                try await withThrowingTaskGroup(of: Void.self) { writers in
                    for w in 0..<6 {
                        writers.addTask {
                            for k in 0..<30 {
                                try await db.transaction { c in
                                    try await c.query("SET LOCAL synchronous_commit = on", logger: db.logger)
                                    #expect(try await c.query("SHOW synchronous_commit", logger: db.logger).first(String.self) == "on")
                                    let n = w * 100 + k
                                    try await writer.append(Self.envelopes(n...n), on: c)
                                    // Work after the append: the numbering still waits for the end.
                                    try await c.query("SELECT pg_sleep(\(Double.random(in: 0...0.004)))", logger: db.logger)
                                }
                            }
                        }
                    }
                    try await writers.waitForAll()
                }
                probe.writing.store(false, ordering: .relaxed)
                try await group.waitForAll()
            }
            #expect(probe.reads.load(ordering: .relaxed) > 10)
            #expect(probe.holes.load(ordering: .relaxed) == 0)
            let seqs = try await Self.rows(db).compactMap(\.seq).sorted()
            #expect(seqs == (1...180).map(Int64.init))
            while try await relay.relayBatch() > 0 {}
            let sent = RelayBodyCacheTests.published(sink).map(\.seq)
            #expect(sent == (1...180).map(Int64.init), "the relay sent \(sent.count) events, out of order or with gaps")
        }
    }
}
