import Foundation
import Logging
import Persistence
import PostgresNIO
import Support
import Synchronization
import Testing

/// A transaction whose connection is lost before its COMMIT was sent ran nothing that committed,
/// so `Database.transaction` runs it again on another connection instead of answering the
/// caller with an error (the soak found completions answered 503 when every connection of the
/// alarms service was terminated: `pg_terminate_backend`, a failover, an idle-session kill).
@Suite("A transaction that lost its connection before COMMIT runs again")
struct ConnectionLossRetryTests {
    @Test("its backend terminated during a statement: the transaction runs again and its row is written once",
          .timeLimit(.minutes(1)))
    func terminatedMidTransaction() async throws {
        let url = try await TestDatabase.create("conn-loss")
        let db = try testPool(url)
        let admin = try testPool(url)
        try await withPool(db) { db in
            try await withPool(admin) { admin in
                try await db.query("CREATE TABLE marks (id int PRIMARY KEY, attempt int NOT NULL)")
                let attempts = Mutex(0)
                let started = ContinuousClock.now
                try await db.transaction { c in
                    let n = attempts.withLock { a in a += 1; return a }
                    try await c.query("INSERT INTO marks VALUES (1, \(n))", logger: db.logger)
                    guard n == 1 else { return }
                    // The first attempt's backend is ended while its statement runs.
                    let pid = try await c.query("SELECT pg_backend_pid()", logger: db.logger).first(Int32.self) ?? 0
                    let killer = Task {
                        try await Task.sleep(for: .milliseconds(300))
                        try await admin.query("SELECT pg_terminate_backend(\(pid))")
                    }
                    defer { killer.cancel() }
                    _ = try await c.query("SELECT pg_sleep(10)", logger: db.logger).collect()
                    Issue.record("the statement outlived its backend")
                }
                #expect(attempts.withLock { $0 } == 2)
                #expect(started.duration(to: .now) < .seconds(8), "the retry waited for the killed statement")
                let rows = try await db.query("SELECT id, attempt FROM marks ORDER BY id").collect()
                let decoded = try rows.map { try $0.decode((Int32, Int32).self) }
                #expect(decoded.count == 1 && decoded.first?.0 == 1 && decoded.first?.1 == 2, "rows: \(decoded)")
            }
        }
    }

    @Test("a body's own error is not retried, with or without a lost connection elsewhere")
    func ownErrorsPropagate() async throws {
        struct Refused: Error {}
        let url = try await TestDatabase.create("conn-loss-own")
        let db = try testPool(url)
        try await withPool(db) { db in
            let attempts = Mutex(0)
            await #expect(throws: Refused.self) {
                try await db.transaction { _ in
                    attempts.withLock { $0 += 1 }
                    throw Refused()
                }
            }
            #expect(attempts.withLock { $0 } == 1)
        }
    }
}
