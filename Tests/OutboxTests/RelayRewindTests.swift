import Foundation
import Messaging
@testable import Outbox
import Persistence
import Support
import Synchronization
import Testing

/// Issue 75: a stream whose head went back under a relay that kept running (a failover to a
/// standby that had not received the last commits). The relay read on after its old position
/// and announced it in heartbeats: the events numbered again below it were never sent, and
/// consumers reported lag 0.
@Suite("Outbox: a stream that goes back under a running relay")
struct RelayRewindTests {
    /// Publishes and heartbeats, as they went out.
    final class Recorded: EventSink {
        let events = Mutex<[(seq: Int64, envelope: Data)]>([])
        let heads = Mutex<[Int64]>([])
        func publish(stream: String, events new: [(seq: Int64, envelope: Data)]) { events.withLock { $0 += new } }
        func heartbeat(stream: String, head: Int64) { heads.withLock { $0.append(head) } }

        var published: [(seq: Int64, n: Int)] {
            events.withLock { $0 }.map { e in
                let envelope = try! Envelope.decode(e.envelope)
                return (e.seq, (try! JSONSerialization.jsonObject(with: envelope.payload) as! [String: Int])["n"]!)
            }
        }
    }

    /// A relay and writer on a migrated outbox, with events 1…10 written and sent.
    static func relaySent10(_ db: Database) async throws -> (Recorded, OutboxRelay, OutboxWriter) {
        _ = try await Migrator(database: db).migrate([OutboxSchema.migration])
        let sink = Recorded()
        let relay = OutboxRelay(database: db, stream: "peer", sink: sink, telemetry: .discarding())
        let writer = OutboxWriter(stream: "peer", source: "peer/1", telemetry: .discarding(), database: db, relay: relay)
        try await db.transaction { c in try await writer.append(RelayBodyCacheTests.envelopes(1...10), on: c) }
        while try await relay.relayBatch() > 0 {}
        return (sink, relay, writer)
    }

    @Test("the head goes back from 10 to 4 and the producer goes on: the new events numbered 5…7 are sent, and the heartbeat announces the table's head")
    func rewindUnderRunningRelay() async throws {
        let url = try await TestDatabase.create("relayrewind")
        try await withDatabase(url: url, schema: "producer") { db in
            let (sink, relay, writer) = try await Self.relaySent10(db)
            try await relay.heartbeat()
            #expect(sink.heads.withLock { $0.last } == 10)
            // The standby had events 1…4 only.
            try await db.query("DELETE FROM outbox WHERE seq > 4")
            try await db.query("UPDATE outbox_streams SET last_seq = 4 WHERE stream = 'peer'")
            // The producer goes on: its next events are numbered 5, 6, 7.
            try await db.transaction { c in try await writer.append(RelayBodyCacheTests.envelopes(101...103), on: c) }
            while try await relay.relayBatch() > 0 {}
            try await relay.heartbeat()
            while try await relay.relayBatch() > 0 {}
            #expect(sink.published.filter { $0.n > 100 }.map(\.seq) == [5, 6, 7], "the new events went out under their numbers")
            #expect(sink.heads.withLock { $0.last } == 7, "consumers past 7 must hear the head went back")
            // And on from there as usual.
            try await db.transaction { c in try await writer.append(RelayBodyCacheTests.envelopes(104...104), on: c) }
            while try await relay.relayBatch() > 0 {}
            #expect(sink.published.last.map { [$0.seq, Int64($0.n)] } == [8, 104])
        }
    }

    @Test("the head goes back from 10 to 4 and the producer writes 7 events before the next heartbeat (head 11, past the old 10): still found, 5…11 sent")
    func rewindHiddenByABurst() async throws {
        let url = try await TestDatabase.create("relayrewindburst")
        try await withDatabase(url: url, schema: "producer") { db in
            let (sink, relay, writer) = try await Self.relaySent10(db)
            try await db.query("DELETE FROM outbox WHERE seq > 4")
            try await db.query("UPDATE outbox_streams SET last_seq = 4 WHERE stream = 'peer'")
            try await db.transaction { c in try await writer.append(RelayBodyCacheTests.envelopes(101...107), on: c) }
            while try await relay.relayBatch() > 0 {}
            try await relay.heartbeat()
            while try await relay.relayBatch() > 0 {}
            #expect(sink.published.filter { $0.n > 100 }.map(\.seq) == Array(5...11))
        }
    }

    @Test("where to read on from: after the last number whose event is the one sent; before the lowest remembered when even that differs")
    func readOnAfter() {
        var s = SentNumbers(capacity: 5)
        for k in 1...8 { s.sent(Int64(k), "e\(k)") }   // remembers 4…8
        #expect(s.lowest == 4)
        // Back to 6; 5 and 6 are new events.
        #expect(s.readOnAfter(head: 6, rows: [(4, "e4"), (5, "x5"), (6, "x6")]) == 4)
        // Back to 5, nothing new yet.
        #expect(s.readOnAfter(head: 5, rows: [(4, "e4"), (5, "e5")]) == 5)
        // Even the lowest remembered differs: from before it.
        #expect(s.readOnAfter(head: 6, rows: [(4, "x4"), (5, "x5"), (6, "x6")]) == 3)
        // Back below everything remembered: from the head (deeper than the memory reaches).
        #expect(s.readOnAfter(head: 2, rows: []) == 2)
        #expect(SentNumbers().readOnAfter(head: 9, rows: []) == 9)
    }
}
