import Logging
import PostgresNIO

/// Rows of a query run as a prepared statement.
public typealias PreparedRows = AsyncThrowingMapSequence<PostgresRowSequence, PostgresRow>

/// A query run as a named prepared statement: PostgreSQL parses, analyses and plans it once
/// per connection (then reuses the plan, or re-plans only with new values when its custom
/// plans are cheaper), instead of at every execution as with an unnamed statement.
///
/// postgres-nio asks a prepared statement's *type* for its name and text; this one type serves
/// every query by reading them from a task-local value that ``PostgresConnection/prepared(_:logger:)``
/// sets around the call. The name is a hash of the text, so the same text is one statement on
/// a connection however many call sites run it.
///
/// Only for statements whose text is the same on every call (values only as interpolated
/// bindings, no text built from data): each distinct text stays prepared for the life of the
/// connection. A parameter first bound as NULL gets the type PostgreSQL infers from its
/// context, which must agree with the Swift type of later values — write an explicit cast
/// (`\(x)::timestamptz`) where the context does not fix it.
struct PreparedQuery: PostgresPreparedStatement {
    typealias Row = PostgresRow

    struct Text: Sendable {
        var name: String
        var sql: String
    }

    /// The statement being run by this task.
    @TaskLocal static var current = Text(name: "", sql: "")

    static var name: String { current.name }
    static var sql: String { current.sql }

    let bindings: PostgresBindings

    func makeBindings() throws -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }

    /// `chronir_` and the 64-bit FNV-1a hash of `sql`, in hex.
    static func name(of sql: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in sql.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return "chronir_" + String(hash, radix: 16)
    }

    /// Runs `body` with `query`'s name and text as the current statement.
    static func with<T>(_ query: PostgresQuery, _ body: (PreparedQuery) async throws -> T) async throws -> T {
        try await $current.withValue(Text(name: name(of: query.sql), sql: query.sql)) {
            try await body(PreparedQuery(bindings: query.binds))
        }
    }
}

extension PostgresConnection {
    /// Runs `query` as a named prepared statement on this connection (see ``PreparedQuery``):
    /// for statements with fixed text that run many times, such as those of every event batch
    /// or every request.
    @discardableResult
    public func prepared(_ query: PostgresQuery, logger: Logger) async throws -> PreparedRows {
        try await PreparedQuery.with(query) { try await self.execute($0, logger: logger) }
    }
}

extension Database {
    /// Runs `query` outside a transaction as a named prepared statement (see
    /// ``PostgresConnection/prepared(_:logger:)``).
    @discardableResult
    public func prepared(_ query: PostgresQuery) async throws -> PreparedRows {
        guard availability.isUp else { throw DatabaseUnavailable() }
        return try await PreparedQuery.with(query) { try await client.execute($0, logger: logger) }
    }
}
