import Logging
import Persistence
import PostgresNIO

/// The lock-or-create step of the outbox relays and the consumers: their bookkeeping row
/// (`outbox_streams`, `consumer_checkpoints`) exists after its first use, so the common case is
/// one `SELECT … FOR UPDATE`; only the first time is the row inserted and the lock taken again,
/// in a statement of its own so it sees a row another transaction inserted meanwhile. The
/// lock runs as a prepared statement (it runs once per batch of every relay and consumer).
enum RowLock {
    /// Runs `lock` (a `SELECT <bigint> … FOR UPDATE`); when it finds no row, runs `create`
    /// (an `INSERT … ON CONFLICT DO NOTHING`) and `lock` again. Returns the locked value.
    static func value(_ lock: PostgresQuery, creating create: PostgresQuery,
                      on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        if let value = try await connection.prepared(lock, logger: logger).first(Int64.self) { return value }
        try await connection.query(create, logger: logger)
        return try await connection.prepared(lock, logger: logger).first(Int64.self) ?? 0
    }
}
