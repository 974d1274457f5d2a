import Messaging
import Persistence
import PostgresNIO

/// Where a service's streams stand: the head of the stream it produces, the checkpoint of each
/// stream it consumes, and its dead letters (`system.streams`, for the operations page).
public enum StreamPositions {
    public static func read(service: String, in database: Database) async throws -> StreamsReport {
        var produced: [String: Int64] = [:]
        for try await (stream, seq) in try await database.query("SELECT stream, last_seq FROM outbox_streams").decode((String, Int64).self) {
            produced[stream] = seq
        }
        var consumed: [String: Int64] = [:]
        for try await (stream, seq) in try await database.query("SELECT stream, seq FROM consumer_checkpoints").decode((String, Int64).self) {
            consumed[stream] = seq
        }
        let dead = try await database.query("SELECT count(*)::int FROM consumer_dead_letters").first(Int.self) ?? 0
        return StreamsReport(service: service, produced: produced, consumed: consumed, deadLetters: dead)
    }
}
