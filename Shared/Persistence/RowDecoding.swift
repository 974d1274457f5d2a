import PostgresNIO

/// Decoding helpers for rows of plain queries (``PostgresRowSequence``) and of prepared ones
/// (``PreparedRows``) alike.
extension AsyncSequence where Element == PostgresRow {
    /// Collects every row decoded as `T`.
    public func all<T: PostgresDecodable>(_ type: T.Type) async throws -> [T] {
        var out: [T] = []
        for try await row in self { out.append(try row.decode(T.self)) }
        return out
    }

    /// Reads every row (a write's result): the statement has finished when it returns, and
    /// the connection is back in the pool. Returns the number of rows.
    @discardableResult
    public func drain() async throws -> Int {
        var n = 0
        for try await _ in self { n += 1 }
        return n
    }

    /// The first row decoded as `T`, if any.
    public func first<T: PostgresDecodable>(_ type: T.Type) async throws -> T? {
        for try await row in self { return try row.decode(T.self) }
        return nil
    }
}
