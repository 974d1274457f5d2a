import Foundation
@testable import NotificationsService
import Persistence
import PostgresNIO
import Support
import Testing

/// Issue 75: inbox locks were taken per event, one per user: two consumer transactions that met
/// the same users in opposite orders deadlocked (40P01), and a 500-event batch could take more
/// locks than the lock table holds (53200, retried for ever). Now a transaction holds at most
/// ``NotificationStore/inboxLockBuckets`` of them and waits only in increasing order.
@Suite("Inbox lock order")
struct InboxLockOrderTests {
    @Test("a batch for 5 000 users holds at most 1 024 inbox locks")
    func boundedLocks() async throws {
        let url = try await TestDatabase.create("inboxlocks")
        try await withDatabase(url: url, schema: "notifications") { db in
            _ = try await Migrator(database: db).migrate(NotificationsService.migrations)
            let store = NotificationStore(database: db)
            let held = try await db.transaction { c in
                try await store.lockInboxes(of: (0..<5_000).map { "user-\($0)" }, on: c, logger: db.logger)
                let rows = try await c.query("SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory'",
                                             logger: db.logger)
                var n: Int64 = 0
                for try await v in rows.decode(Int64.self) { n = v }
                return n
            }
            #expect(held > 0 && held <= Int64(NotificationStore.inboxLockBuckets), "the transaction held \(held) advisory locks")
        }
    }

    @Test("two transactions that meet each other's inbox locks in opposite orders do not deadlock: the one that would wait out of order steps back")
    func oppositeOrders() async throws {
        let url = try await TestDatabase.create("inboxlockorder")
        try await withDatabase(url: url, schema: "notifications") { db in
            _ = try await Migrator(database: db).migrate(NotificationsService.migrations)
            let store = NotificationStore(database: db)
            let logger = db.logger
            func bucket(_ u: String) async throws -> Int32 {
                try await db.query("SELECT (hashtextextended('inbox:' || \(u), 0) & 1023)::int").all(Int32.self)[0]
            }
            let (a, b) = ("user-a", "user-b")
            let (ba, bb) = (try await bucket(a), try await bucket(b))
            try #require(ba != bb)
            let (low, high) = ba < bb ? (a, b) : (b, a)
            let t1Holds = AsyncGate()
            let t2Holds = AsyncGate()
            // T2: low, then high — in order, so it may wait for high, which T1 holds.
            let t2 = Task {
                try await db.client.withConnection { c in
                    try await CommitHooks.$current.withValue(CommitHooks()) {
                        await t1Holds.wait()
                        try await c.query("BEGIN", logger: logger)
                        try await store.lockInboxes(of: [low], on: c, logger: logger)
                        await t2Holds.open()
                        try await store.lockInboxes(of: [high], on: c, logger: logger)
                        try await c.query("COMMIT", logger: logger)
                    }
                }
            }
            // T1: high, then low — out of order while T2 holds low and waits for high.
            let t1Error: (any Error)? = try await db.client.withConnection { c in
                try await CommitHooks.$current.withValue(CommitHooks()) {
                    try await c.query("BEGIN", logger: logger)
                    try await store.lockInboxes(of: [high], on: c, logger: logger)
                    await t1Holds.open()
                    await t2Holds.wait()
                    try await Task.sleep(for: .milliseconds(200))   // T2 is waiting for high by now
                    var error: (any Error)?
                    do { try await store.lockInboxes(of: [low], on: c, logger: logger) } catch let e { error = e }
                    try await c.query("ROLLBACK", logger: logger)
                    return error
                }
            }
            #expect(t1Error is TransactionConflict, "T1 should step back, not wait: \(String(describing: t1Error))")
            try await t2.value   // T2 commits: nobody deadlocked
        }
    }
}
