import Foundation
import Persistence
import PostgresNIO
import Support
import Testing

/// Queries run as named prepared statements on a real PostgreSQL.
@Suite("Prepared queries")
struct PreparedQueryTests {
    @Test("a prepared query is parsed once per connection and binds each call's values, NULL first included")
    func preparedOncePerConnection() async throws {
        let url = try await TestDatabase.create("prepared")
        try await withDatabase(url: url, schema: "public") { db in
            try await db.query("CREATE TABLE t (id bigint PRIMARY KEY, note text, at timestamptz)")
            let statements: [(String, String)] = try await db.transaction { c in
                // Seven runs: past the five custom plans after which PostgreSQL may switch to a
                // generic plan. The first binds both optional columns as NULL.
                for i in 1...7 {
                    let note: String? = i % 2 == 1 ? nil : "n\(i)"
                    let at: Date? = i == 1 ? nil : Date(timeIntervalSince1970: Double(i))
                    try await c.prepared("INSERT INTO t (id, note, at) VALUES (\(Int64(i)), \(note), \(at))", logger: db.logger)
                }
                for minimum in [Int64(3), 5] {
                    let n = try await c.prepared("SELECT count(*)::bigint FROM t WHERE id > \(minimum)", logger: db.logger).first(Int64.self)
                    #expect(n == 7 - minimum)
                }
                var out: [(String, String)] = []
                let rows = try await c.query("SELECT name, statement FROM pg_prepared_statements ORDER BY statement", logger: db.logger)
                for try await (name, sql) in rows.decode((String, String).self) { out.append((name, sql)) }
                return out
            }
            // One statement per text on this connection, named after it.
            let ours = statements.filter { $0.0.hasPrefix("chronir_") }
            #expect(ours.count == 2)
            #expect(ours.map(\.1) == ["INSERT INTO t (id, note, at) VALUES ($1, $2, $3)", "SELECT count(*)::bigint FROM t WHERE id > $1"])
            #expect(Set(ours.map(\.0)).count == 2)

            var stored: [(Int64, String?, Date?)] = []
            for try await row in try await db.prepared("SELECT id, note, at FROM t WHERE id <= \(Int64(3)) ORDER BY id") {
                stored.append(try row.decode((Int64, String?, Date?).self))
            }
            #expect(stored.map(\.0) == [1, 2, 3])
            #expect(stored.map(\.1) == [nil, "n2", nil])
            #expect(stored.map(\.2) == [nil, Date(timeIntervalSince1970: 2), Date(timeIntervalSince1970: 3)])
        }
    }

    @Test("a prepared query PostgreSQL rejects throws its error and the pool keeps serving")
    func rejectedStatement() async throws {
        let url = try await TestDatabase.create("prepared")
        try await withDatabase(url: url, schema: "public") { db in
            await #expect(throws: PSQLError.self) { try await db.prepared("SELEC \(Int64(1))") }
            await #expect(throws: PSQLError.self) { try await db.prepared("SELECT 1 FROM missing_table WHERE 1 = \(Int64(1))") }
            let answer = try await db.prepared("SELECT \(Int64(41)) + 1").first(Int64.self)
            #expect(answer == 42)
        }
    }
}
