import Foundation
import Messaging
@testable import Outbox
import Persistence
import PostgresNIO
import Support
import Testing

/// An event too large to be replayed is refused when it is written (issue 58): stored, it would
/// stop every consumer of its stream for ever (a replay cannot carry it). The change that made it
/// fails with it; nothing is stored.
@Suite("Outbox: oversized events refused")
struct OversizedEventTests {
    static func envelope(text: String) -> Envelope {
        let payload = try! JSONSerialization.data(withJSONObject: ["note": text])
        return Envelope(type: "peer.noted", source: "peer/1", payload: payload)
    }

    @Test("an event whose replay would pass the limit fails its transaction (CA payload too large) and leaves nothing; one under it is stored")
    func refused() async throws {
        let url = try await TestDatabase.create("oversized")
        try await withDatabase(url: url, schema: "producer") { db in
            _ = try await Migrator(database: db).migrate([OutboxSchema.migration])
            let writer = OutboxWriter(stream: "peer", source: "peer/1", telemetry: .discarding(), database: db, relay: nil)
            // 300 000 quotes: 600 000 bytes in the payload (each escaped), 1.2 MB once the
            // envelope is a string in a replay, though the raw text is under the limit.
            let quoted = Self.envelope(text: String(repeating: "\"", count: 300_000))
            #expect(300_000 < OutboxWriter.maxEventBytes)
            var code: ErrorCode?
            do {
                try await db.transaction { c in
                    try await c.query("CREATE TABLE changed (id int)", logger: db.logger)
                    try await writer.append([quoted], on: c)
                }
            } catch let e as ServiceError {
                code = e.code
            }
            #expect(code == .payloadTooLarge)
            #expect(try await db.query("SELECT count(*)::int FROM outbox").first(Int.self) == 0)
            #expect(try await db.query("SELECT to_regclass('changed') IS NULL").first(Bool.self) == true, "the change was kept without its event")
            // 200 000 plain letters: stored.
            let plain = Self.envelope(text: String(repeating: "a", count: 200_000))
            try await db.transaction { c in try await writer.append([plain], on: c) }
            #expect(try await db.query("SELECT count(*)::int FROM outbox").first(Int.self) == 1)
            // And what is stored can be replayed within the frame a consumer takes.
            let batch = try await OutboxReplay.replay(database: db, stream: "peer", after: 0, limit: 10)
            #expect(batch.events.count == 1)
        }
    }
}
