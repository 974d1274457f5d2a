import Foundation
import Messaging
import Persistence
import PostgresNIO
import Tracing

/// The operator's view of a service's dead letters: list, replay through the consumer's
/// handlers, drop.
public enum DeadLetterStore {
    /// Dead letters, oldest first (at most `limit`), of `stream` or of every stream.
    public static func list(in database: Database, stream: String?, limit: Int) async throws -> [DeadLetter] {
        var out: [DeadLetter] = []
        let rows = try await database.query("""
            SELECT stream, seq, type, reason, recorded_at FROM consumer_dead_letters
            WHERE \(stream)::text IS NULL OR stream = \(stream) ORDER BY recorded_at, stream, seq LIMIT \(limit)
            """)
        for try await (s, seq, type, reason, at) in rows.decode((String, Int64, String?, String, Date).self) {
            out.append(DeadLetter(stream: s, seq: seq, type: type, reason: reason, recordedAt: at))
        }
        return out
    }

    /// Removes a dead letter; false when there was none.
    public static func drop(in database: Database, stream: String, seq: Int64) async throws -> Bool {
        let n = try await database.query("DELETE FROM consumer_dead_letters WHERE stream = \(stream) AND seq = \(seq) RETURNING 1")
            .collect().count
        return n > 0
    }
}

extension PostgresEventApplier {
    /// Applies the dead letter `stream`/`seq` through this consumer's handlers and removes it,
    /// in one transaction that holds the stream's checkpoint row (so it does not interleave
    /// with a live batch). Throws ``ServiceError`` when there is no such dead letter or this
    /// build still cannot handle it.
    public func replayDeadLetter(stream: String, seq: Int64) async throws {
        let logger = telemetry.logger
        try await database.transaction { connection in
            _ = try await Self.lockCheckpoint(stream, on: connection, logger: logger)
            let row = try await connection.query("""
                SELECT envelope FROM consumer_dead_letters WHERE stream = \(stream) AND seq = \(seq) FOR UPDATE
                """, logger: logger).first(String.self)
            guard let raw = row else { throw ServiceError.notFound("no dead letter \(stream)/\(seq)") }
            let envelope: Envelope
            do {
                envelope = try Envelope.decode(Data(raw.utf8))
            } catch {
                throw ServiceError.validation("dead letter \(stream)/\(seq) is not an envelope (\(error)); drop it instead")
            }
            if let reason = self.handlers.cannotHandle(envelope) {
                throw ServiceError.validation("this build still cannot handle dead letter \(stream)/\(seq): \(reason)")
            }
            var log = logger
            log[metadataKey: "event"] = "\(envelope.id)"
            let context = EventContext(event: DeliveredEvent(seq: seq, envelope: envelope), logger: log)
            if let handler = self.handlers.handlers[envelope.type] {
                try await handler(context, connection)
            } else if let (_, batch) = self.handlers.batchHandlers[envelope.type] {
                try await batch([context], connection)
            }
            try await connection.query("DELETE FROM consumer_dead_letters WHERE stream = \(stream) AND seq = \(seq)", logger: logger)
        }
        afterCommit()
        logger.notice("dead letter replayed by an operator", metadata: ["stream": "\(stream)", "seq": "\(seq)"])
    }
}
