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
            return try await replay(database: database, stream: request.stream, after: request.after, limit: request.limit)
        }
    }

    /// Reads events of `stream` after `after`.
    public static func replay(database: Database, stream: String, after: Int64, limit: Int) async throws -> EventBatch {
        let head = try await database.query("SELECT last_seq FROM outbox_streams WHERE stream = \(stream)").first(Int64.self) ?? 0
        var events: [EventRecord] = []
        let rows = try await database.query("""
            SELECT seq, envelope FROM outbox WHERE stream = \(stream) AND seq > \(after) AND seq <= \(head) ORDER BY seq LIMIT \(limit)
            """)
        for try await (seq, body) in rows.decode((Int64, String).self) {
            events.append(EventRecord(seq: seq, envelope: body))
        }
        let oldest = try await database.query("SELECT min(seq) FROM outbox WHERE stream = \(stream) AND seq IS NOT NULL").first(Int64?.self) ?? nil
        return EventBatch(stream: stream, head: head, firstAvailable: oldest ?? head + 1, events: events)
    }
}
