import LoadFixtures
import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO
import SchedulerCore
import ServiceKit
import Support
import Testing
@testable import SchedulerService

/// The fire transaction against a real PostgreSQL: epochs fence out stale owners, and a fire
/// is recorded (and announced) once however often it is attempted.
@Suite("Fire fencing and exactly-once records")
struct FencingTests {
    func store(_ db: Database, instance: String) throws -> TimerStore {
        let config = try SchedulerConfig(environment: ServiceEnvironment([:]))
        let outbox = OutboxWriter(stream: "scheduler", source: "tests/1", telemetry: .discarding(), database: db, relay: nil)
        return TimerStore(database: db, config: config, outbox: outbox, instance: instance)
    }

    /// Runs `body` on a new database with the scheduler schema migrated.
    func withScheduler(_ label: String, _ body: (Database) async throws -> Void) async throws {
        let url = try await TestDatabase.create(label)
        try await withDatabase(url: url, schema: "scheduler") { db in
            _ = try await Migrator(database: db).migrate(SchedulerMigrations.all)
            try await body(db)
        }
    }

    func timerIDs(_ db: Database, alarm: String) async throws -> [Int64] {
        try await db.query("SELECT id FROM timers WHERE alarm_id = \(alarm) AND kind = 'fire'").all(Int64.self)
    }

    func setLease(_ db: Database, partition: Int, owner: String, epoch: Int64, seconds: Int) async throws {
        try await db.query("""
            UPDATE leases SET owner = \(owner), epoch = \(epoch), expires_at = now() + make_interval(secs => \(seconds))
            WHERE partition = \(Int32(partition))
            """)
    }

    @Test("a stale epoch records nothing; the current owner records once; repeats record nothing")
    func fencing() async throws {
        try await withScheduler("fence") { db in
            let all = (0..<256).map(Int32.init)
            try await db.query("INSERT INTO leases (partition) SELECT unnest(\(all)::int[])")
            let alarm = "fence-0"
            let p = Partitioning.partition(of: alarm, partitions: 256)
            try await SchedulerLoad(database: db).seed(prefix: "fence", dues: [Date().addingTimeInterval(-1)])
            let ids = try await timerIDs(db, alarm: alarm)
            #expect(ids.count == 1)

            // A held the partition at epoch 1; B took it over (epoch 2) while A was paused.
            try await setLease(db, partition: p, owner: "B", epoch: 2, seconds: 5)
            let a = try store(db, instance: "A")
            let stale = try await a.fire(ids: ids, owned: [p: 1])
            #expect(stale.fired.isEmpty)
            #expect(try await timerIDs(db, alarm: alarm) == ids, "a fenced fire must leave the timer pending")
            // A with the right epoch number but not the owner is refused too.
            #expect(try await a.fire(ids: ids, owned: [p: 2]).fired.isEmpty)

            // B's lease expired: B is fenced as well until it renews.
            try await setLease(db, partition: p, owner: "B", epoch: 2, seconds: -1)
            let b = try store(db, instance: "B")
            #expect(try await b.fire(ids: ids, owned: [p: 2]).fired.isEmpty)

            try await setLease(db, partition: p, owner: "B", epoch: 2, seconds: 5)
            let first = try await b.fire(ids: ids, owned: [p: 2])
            #expect(first.fired.count == 1)
            #expect(try await b.fire(ids: ids, owned: [p: 2]).fired.isEmpty)
            #expect(try await db.query("SELECT count(*)::int FROM fires WHERE alarm_id = \(alarm)").first(Int.self) == 1)
            #expect(try await db.query("SELECT epoch FROM fires WHERE alarm_id = \(alarm)").first(Int64.self) == 2)
            #expect(try await db.query("SELECT count(*)::int FROM outbox WHERE type = 'scheduler.alarm-fired'").first(Int.self) == 1)
        }
    }

    /// Only the epoch tells these apart: the same owner name (instance ids are reused by `make
    /// run` and by a restarted pod), an unexpired lease, and a batch begun under an older grant.
    @Test("a batch begun under an older epoch of the same owner records nothing, though owner and expiry match")
    func epochAloneFences() async throws {
        try await withScheduler("fence-epoch") { db in
            let all = (0..<256).map(Int32.init)
            try await db.query("INSERT INTO leases (partition) SELECT unnest(\(all)::int[])")
            let alarm = "epoch-0"
            let p = Partitioning.partition(of: alarm, partitions: 256)
            try await SchedulerLoad(database: db).seed(prefix: "epoch", dues: [Date().addingTimeInterval(-1)])
            let ids = try await timerIDs(db, alarm: alarm)
            #expect(ids.count == 1)
            // A held the partition at epoch 1, lost it (B, epoch 2), and took it back: epoch 3.
            try await setLease(db, partition: p, owner: "A", epoch: 3, seconds: 30)
            let a = try store(db, instance: "A")
            let stale = try await a.fire(ids: ids, owned: [p: 1])
            #expect(stale.fired.isEmpty, "a batch of epoch 1 fired under the lease of epoch 3")
            #expect(try await timerIDs(db, alarm: alarm) == ids, "a fenced fire must leave the timer pending")
            let current = try await a.fire(ids: ids, owned: [p: 3])
            #expect(current.fired.count == 1)
            #expect(try await db.query("SELECT epoch FROM fires WHERE alarm_id = \(alarm)").first(Int64.self) == 3)
        }
    }

    @Test("re-creating a timer for an occurrence that already fired does not fire it again")
    func duplicateTimer() async throws {
        try await withScheduler("fence-dup") { db in
            let all = (0..<256).map(Int32.init)
            try await db.query("INSERT INTO leases (partition, owner, epoch, expires_at) SELECT unnest(\(all)::int[]), 'A', 1, now() + interval '1 minute'")
            let owned = Dictionary(uniqueKeysWithValues: (0..<256).map { ($0, Int64(1)) })
            let due = Date().addingTimeInterval(-1)
            let a = try store(db, instance: "A")
            try await SchedulerLoad(database: db).seed(prefix: "dup", dues: [due])
            #expect(try await a.fire(ids: try await timerIDs(db, alarm: "dup-0"), owned: owned).fired.count == 1)
            // The same occurrence's timer appears again (a replayed event, a restore): no second fire.
            try await db.query("""
                INSERT INTO timers (partition, alarm_id, kind, occurrence_at, due_at)
                VALUES (\(Int32(Partitioning.partition(of: "dup-0", partitions: 256))), 'dup-0', 'fire', \(due), \(due))
                """)
            let again = try await a.fire(ids: try await timerIDs(db, alarm: "dup-0"), owned: owned)
            #expect(again.fired.isEmpty)
            #expect(again.skipped == 1)
            #expect(try await db.query("SELECT count(*)::int FROM outbox").first(Int.self) == 1)
        }
    }
}
