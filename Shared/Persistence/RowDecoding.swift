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

    /// The first row decoded as `T`, if any.
    public func first<T: PostgresDecodable>(_ type: T.Type) async throws -> T? {
        for try await row in self { return try row.decode(T.self) }
        return nil
    }
}
