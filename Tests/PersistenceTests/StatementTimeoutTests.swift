import Foundation
import Logging
import Persistence
import PostgresNIO
import Support
import Testing

/// The database settings a service's connections start with (issue 58): a statement that waits
/// longer than `CHRONIR_DB_STATEMENT_TIMEOUT` fails instead of holding its caller for ever, and
/// the server probes idle connections so a vanished client stops holding its locks.
@Suite("Statement timeout and keepalives")
struct StatementTimeoutTests {
    @Test("a statement waiting on a lock past the timeout fails with 57014; without a timeout it waits; keepalives are set")
    func statementTimeout() async throws {
        let url = try await TestDatabase.create("stmt-timeout")
        let bounded = try testPool(url, statementTimeout: .milliseconds(500))
        let unbounded = try testPool(url, statementTimeout: nil)
        try await withPool(bounded) { db in
            try await withPool(unbounded) { other in
                #expect(try await db.query("SHOW statement_timeout").first(String.self) == "500ms")
                #expect(try await db.query("SHOW tcp_keepalives_idle").first(String.self) == "30")
                try await other.query("CREATE TABLE held (id int PRIMARY KEY)")
                try await other.query("INSERT INTO held VALUES (1)")
                // Another session holds the row for 2 s.
                let holder = Task {
                    try await other.transaction { c in
                        try await c.query("SELECT id FROM held WHERE id = 1 FOR UPDATE", logger: other.logger)
                        try await c.query("SELECT pg_sleep(2)", logger: other.logger)
                    }
                }
                try await Task.sleep(for: .milliseconds(300))
                let started = ContinuousClock.now
                var state: String?
                do {
                    try await db.query("UPDATE held SET id = 1 WHERE id = 1")
                } catch let error as PSQLError {
                    state = error.serverInfo?[.sqlState]
                }
                let waited = started.duration(to: .now)
                #expect(state == "57014", "the blocked statement ended with \(state ?? "no error")")
                #expect(waited < .milliseconds(1500), "it waited \(waited)")
                try await holder.value
                // Unbounded, the same wait ends when the lock is released (a control).
                let holder2 = Task {
                    try await other.transaction { c in
                        try await c.query("SELECT id FROM held WHERE id = 1 FOR UPDATE", logger: other.logger)
                        try await c.query("SELECT pg_sleep(1)", logger: other.logger)
                    }
                }
                try await Task.sleep(for: .milliseconds(300))
                try await other.query("UPDATE held SET id = 1 WHERE id = 1")
                try await holder2.value
            }
        }
    }
}
