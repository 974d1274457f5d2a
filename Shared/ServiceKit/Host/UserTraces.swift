import Persistence
import PostgresNIO

/// Finds a value (a deleted user's uid or email) anywhere in a service's own schema.
public enum UserTraces {
    /// Rows per `table.column` whose text holds `needle`, over every text, array and JSON column
    /// of the database's schema; outboxes (kept for their retention) and dead letters are left
    /// out. A sequential scan of each such column: an operator's check, not a request path.
    public static func find(_ needle: String, in database: Database) async throws -> [String: Int] {
        guard !needle.isEmpty else { return [:] }
        let columns = try await database.query("""
            SELECT table_name::text, column_name::text FROM information_schema.columns
            WHERE table_schema = current_schema() AND data_type IN ('text', 'character varying', 'ARRAY', 'jsonb', 'json')
              AND table_name NOT IN ('outbox', 'outbox_streams', 'consumer_dead_letters', 'schema_migrations')
            ORDER BY table_name, column_name
            """).decode((String, String).self)
        var found: [String: Int] = [:]
        for try await (table, column) in columns {
            var binds = PostgresBindings()
            binds.append(needle)
            let sql = "SELECT count(*)::int FROM \"\(table)\" WHERE strpos(\"\(column)\"::text, $1) > 0"
            let n = try await database.query(PostgresQuery(unsafeSQL: sql, binds: binds)).first(Int.self) ?? 0
            if n > 0 { found["\(table).\(column)"] = n }
        }
        return found
    }
}
