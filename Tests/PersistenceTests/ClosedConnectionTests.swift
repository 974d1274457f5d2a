import Foundation
import Logging
import Persistence
import PostgresNIO
import Support
import Synchronization
import Testing

/// A transaction whose connection closes between two of its statements ends with an error
/// instead of waiting forever: PostgresNIO 1.33 drops a statement written to a closed channel
/// without answering it. The CI soak of stop 81 found one alarms replica answering no
/// completion again after every connection of alarms was terminated: both of its batch
/// runners waited so for good.
@Suite("A transaction whose connection closes under it ends")
struct ClosedConnectionTests {
    @Test("its backend terminated between two statements: the next statement ends the attempt within the grace period, and the transaction runs again",
          .timeLimit(.minutes(1)))
    func terminatedBetweenStatements() async throws {
        let url = try await TestDatabase.create("closed-conn")
        let db = try testPool(url)
        let admin = try testPool(url)
        try await withPool(db) { db in
            try await withPool(admin) { admin in
                try await db.query("CREATE TABLE marks (id int PRIMARY KEY, attempt int NOT NULL)")
                let attempts = Mutex(0)
                let started = ContinuousClock.now
                let outcome = await outcome {
                    try await withDeadline(.seconds(15)) {
                        try await db.transaction { c in
                            let n = attempts.withLock { a in a += 1; return a }
                            try await c.query("INSERT INTO marks VALUES (1, \(n))", logger: db.logger)
                            guard n == 1 else { return }
                            let pid = try await c.query("SELECT pg_backend_pid()", logger: db.logger).first(Int32.self) ?? 0
                            // Ended while the transaction does something else (Swift work, a call
                            // to another service), not during a statement.
                            try await admin.query("SELECT pg_terminate_backend(\(pid))")
                            let seen = ContinuousClock.now
                            while !c.isClosed && seen.duration(to: .now) < .seconds(5) {
                                try await Task.sleep(for: .milliseconds(10))
                            }
                            #expect(c.isClosed, "the connection did not notice its backend ended")
                            try await Task.sleep(for: .milliseconds(200))
                            try await c.query("INSERT INTO marks VALUES (2, 1)", logger: db.logger)
                            Issue.record("a statement on a closed connection was answered")
                        }
                    }
                }
                let elapsed = started.duration(to: .now)
                if case .failure(let error) = outcome {
                    Issue.record(error is DeadlineExceeded ? "the transaction waited for an answer that never comes"
                                                           : "the transaction failed: \(String(reflecting: error))")
                }
                #expect(attempts.withLock { $0 } == 2)
                #expect(elapsed < .seconds(8), "ended after \(elapsed)")
                // Only the second attempt committed.
                let rows = try await db.query("SELECT id, attempt FROM marks ORDER BY id").collect()
                let decoded = try rows.map { try $0.decode((Int32, Int32).self) }
                #expect(decoded.count == 1 && decoded.first?.0 == 1 && decoded.first?.1 == 2, "rows: \(decoded)")
            }
        }
    }

    @Test("a body that throws a lost-connection error about another connection: its own, still open, is rolled back and the body is not run again")
    func lossElsewhereIsNotThisConnections() async throws {
        let url = try await TestDatabase.create("closed-conn-elsewhere")
        let db = try testPool(url, size: 1)   // the next transaction gets the same connection
        try await withPool(db) { db in
            try await db.query("CREATE TABLE marks (id int PRIMARY KEY)")
            let attempts = Mutex(0)
            await #expect(throws: ConnectionClosedUnderTransaction.self) {
                try await db.transaction { c in
                    attempts.withLock { $0 += 1 }
                    try await c.query("INSERT INTO marks VALUES (1)", logger: db.logger)
                    // As a nested transaction on another database that lost its connection would throw.
                    throw ConnectionClosedUnderTransaction()
                }
            }
            #expect(attempts.withLock { $0 } == 1, "run again for another connection's loss")
            let open = try await db.transaction { c in
                try await c.query("SELECT count(*)::int FROM marks", logger: db.logger).first(Int32.self)
            }
            #expect(open == 0, "the first transaction's insert was left open on the pooled connection")
        }
    }

    @Test("a transaction abandoned so is an outage (answered 503 with Retry-After), not an internal error")
    func abandonedIsAnOutage() {
        #expect(DatabaseAvailability.isOutage(ConnectionClosedUnderTransaction()))
    }

    @Test("a cancelled caller waits for its transaction to end on a live connection before the connection goes back")
    func cancellationWaits() async throws {
        let url = try await TestDatabase.create("closed-conn-cancel")
        let db = try testPool(url)
        try await withPool(db) { db in
            let bodyEnded = Mutex(false)
            let caller = Task {
                try await db.transaction { c in
                    _ = try? await c.query("SELECT pg_sleep(0.5)", logger: db.logger).collect()
                    bodyEnded.withLock { $0 = true }
                }
            }
            try await Task.sleep(for: .milliseconds(100))
            caller.cancel()
            _ = await caller.result
            #expect(bodyEnded.withLock { $0 }, "the caller returned while its transaction still ran on the connection")
            let one = try await db.transaction { c in try await c.query("SELECT 1", logger: db.logger).first(Int32.self) }
            #expect(one == 1)
        }
    }
}

/// The outcome of an async throwing call.
private func outcome(_ body: () async throws -> Void) async -> Result<Void, any Error> {
    do {
        try await body()
        return .success(())
    } catch {
        return .failure(error)
    }
}
