import Messaging
import Persistence
import PostgresNIO

/// Answers `events.replay` from the outbox table: what a consumer missed, in order.
public enum OutboxReplay {
    /// Registers the `events.replay` handler for the streams this service produces.
    public static func register(in router: inout RPCRouter, database: Database, streams: Set<String>) {
        router.on(EventMethods.Replay.self) { request, context in
            guard streams.contains(request.stream) else {
                throw ServiceError(.notFound, "this service does not produce stream \"\(request.stream)\"")
            }
            // On a secured bus the caller is known: only the stream's readers replay it.
            if let caller = context.caller, !StreamReaders.mayRead(caller, request.stream) {
                throw ServiceError(.callerNotAllowed, "\(caller) does not read stream \(request.stream)")
            }
            guard request.limit > 0, request.limit <= 5_000, request.after >= 0 else {
                throw ServiceError(.validationFailed, "after must be ≥ 0 and limit 1...5000")
            }
            let maxBytes = request.maxBytes ?? (1 << 20)
            guard maxBytes >= 64 << 10 else { throw ServiceError(.validationFailed, "maxBytes must be at least 65536") }
            return try await replay(database: database, stream: request.stream, after: request.after, limit: request.limit, maxBytes: maxBytes)
        }
    }

    /// Reads events of `stream` after `after`: at most `limit`, and no more than fit a reply of
    /// `maxBytes` (each envelope counted as it is written into the reply, its quotes, slashes
    /// and backslashes escaped), but always the first, so a consumer moves on.
    public static func replay(database: Database, stream: String, after: Int64, limit: Int, maxBytes: Int = 1 << 20) async throws -> EventBatch {
        let head = try await database.query("SELECT last_seq FROM outbox_streams WHERE stream = \(stream)").first(Int64.self) ?? 0
        var events: [EventRecord] = []
        let rows = try await database.query("""
            SELECT seq, envelope FROM outbox WHERE stream = \(stream) AND seq > \(after) AND seq <= \(head) ORDER BY seq LIMIT \(limit)
            """)
        var budget = maxBytes - (16 << 10)
        for try await (seq, body) in rows.decode((Int64, String).self) {
            let cost = Self.replyBytes(body)
            if !events.isEmpty && cost > budget { break }
            budget -= cost
            events.append(EventRecord(seq: seq, envelope: body))
        }
        let oldest = try await database.query("SELECT min(seq) FROM outbox WHERE stream = \(stream) AND seq IS NOT NULL").first(Int64?.self) ?? nil
        return EventBatch(stream: stream, head: head, firstAvailable: oldest ?? head + 1, events: events)
    }

    /// What `envelope` adds to a reply: its bytes, one more for each character JSON escapes,
    /// and the record around it.
    static func replyBytes(_ envelope: String) -> Int {
        var n = 64
        for b in envelope.utf8 {
            n += (b == 0x22 || b == 0x5C || b == 0x2F) ? 2 : (b < 0x20 ? 6 : 1)
        }
        return n
    }
}
