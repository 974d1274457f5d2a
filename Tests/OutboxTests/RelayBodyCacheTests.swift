import Foundation
import Messaging
@testable import Outbox
import Persistence
import PostgresNIO
import Support
import Synchronization
import Testing

/// The relay sends the envelopes its own process committed from memory and reads the others
/// back, and every event goes out once, numbered in order, with the bytes that were committed.
@Suite("Outbox relay: envelopes from memory", .serialized)
struct RelayBodyCacheTests {
    /// Records what the relay publishes.
    final class Captured: EventSink {
        let events = Mutex<[(seq: Int64, envelope: Data)]>([])
        func publish(stream: String, events new: [(seq: Int64, envelope: Data)]) { events.withLock { $0 += new } }
        func heartbeat(stream: String, head: Int64) {}
    }

    static func envelopes(_ range: ClosedRange<Int>) -> [Envelope] {
        range.map { Envelope(type: "peer.numbered", source: "peer/1", payload: Data("{\"n\":\($0)}".utf8)) }
    }

    static func published(_ sink: Captured) -> [(seq: Int64, n: Int, id: String)] {
        sink.events.withLock { $0 }.map { e in
            let envelope = try! Envelope.decode(e.envelope)
            let n = (try! JSONSerialization.jsonObject(with: envelope.payload) as! [String: Int])["n"]!
            return (e.seq, n, envelope.id)
        }
    }

    @Test("numbered by the relay: committed rows go out from memory; rows of another writer, rolled back ones and a restarted relay's are right too")
    func relayUsesMemoryAndTable() async throws {
        let url = try await TestDatabase.create("relaycache")
        try await withDatabase(url: url, schema: "producer") { db in
            _ = try await Migrator(database: db).migrate([OutboxSchema.migration])
            let sink = Captured()
            let relay = OutboxRelay(database: db, stream: "peer", sink: sink, telemetry: .discarding(), batchSize: 7, numbersAtCommit: false)
            let writer = OutboxWriter(stream: "peer", source: "peer/1", telemetry: .discarding(), database: db, relay: relay, numbersAtCommit: false)
            // Another process's writer: same table, no relay here, so nothing remembered.
            let other = OutboxWriter(stream: "peer", source: "peer/2", telemetry: .discarding(), database: db, relay: nil, numbersAtCommit: false)

            let first = Self.envelopes(1...10)
            try await db.transaction { c in try await writer.append(first, on: c) }
            #expect(relay.bodies.count == 10, "remembered once committed")
            try await db.transaction { c in try await other.append(Self.envelopes(11...13), on: c) }
            // Rolled back: remembered nothing, inserted nothing.
            struct Abort: Error {}
            await #expect(throws: Abort.self) {
                try await db.transaction { c in
                    try await writer.append(Self.envelopes(100...102), on: c)
                    throw Abort()
                }
            }
            #expect(relay.bodies.count == 10)
            try await db.transaction { c in try await writer.append(Self.envelopes(14...15), on: c) }
            // Where each envelope comes from shows when the table no longer holds what was
            // committed: event 2 (this process's, in memory) and event 12 (the other writer's,
            // read back) are changed in the table behind the relay's back.
            try await db.query("UPDATE outbox SET envelope = replace(envelope, '{\"n\":2}', '{\"n\":200}') WHERE id = 2")
            try await db.query("UPDATE outbox SET envelope = replace(envelope, '{\"n\":12}', '{\"n\":1200}') WHERE id = 12")

            while try await relay.relayBatch() > 0 {}
            let out = Self.published(sink)
            #expect(out.map(\.seq) == Array(1...15).map(Int64.init))
            #expect(out.map(\.n) == [1, 2] + Array(3...11) + [1200] + Array(13...15),
                    "event 2 from memory as committed, event 12 from the table")
            #expect(relay.bodies.count == 0, "every remembered envelope was taken")
            // Every other envelope sent is byte for byte the row's.
            let stored = try await db.query("SELECT seq, envelope FROM outbox ORDER BY seq").decode((Int64, String).self)
            var i = 0
            for try await (seq, envelope) in stored {
                let sent = sink.events.withLock { $0[i] }
                #expect(sent.seq == seq)
                if seq != 2 { #expect(sent.envelope == Data(envelope.utf8)) }
                i += 1
            }
            #expect(i == 15)

            // A relay that starts afresh (a restart) has nothing in memory and reads every row.
            try await db.transaction { c in try await writer.append(Self.envelopes(16...18), on: c) }
            let sink2 = Captured()
            let restarted = OutboxRelay(database: db, stream: "peer", sink: sink2, telemetry: .discarding(), numbersAtCommit: false)
            #expect(try await restarted.relayBatch() == 3)
            #expect(Self.published(sink2).map(\.seq) == [16, 17, 18])
            #expect(Self.published(sink2).map(\.n) == [16, 17, 18])
            #expect(relay.bodies.count == 3, "the first relay still holds them; it never numbers them now")
        }
    }

    @Test("the memory is bounded: when the newer generation fills, the older one goes")
    func bounded() {
        let cache = RelayBodyCache(capacity: 10)
        let ids = (1...12).map { "e\($0)" }
        cache.remember(ids: ids, bodies: ids.map { Data($0.utf8) })
        // Generations of 5: e1–e5 went when e6–e10 filled the newer one; e11, e12 start a new one.
        #expect(cache.count == 7)
        let taken = cache.take(["e1", "e5", "e6", "e10", "e11", "e12", "e13"])
        #expect(taken.map { $0.map { String(decoding: $0, as: UTF8.self) } } == [nil, nil, "e6", "e10", "e11", "e12", nil])
        #expect(cache.take(["e6"]) == [nil], "taken once")
        #expect(cache.count == 3)
    }
}
