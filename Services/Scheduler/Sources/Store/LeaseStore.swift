import Foundation
import Logging
import Persistence
import PostgresNIO

/// SQL of partition leases and of the replicas table (``LeaseManager`` decides what to take
/// and give back; ``TimerStore`` reads the leases when it fires).
struct LeaseStore: Sendable {
    let database: Database
    let config: SchedulerConfig
    /// This replica: the owner its leases carry and its row in `replicas`.
    let instance: String
    /// The logger of the statements run inside a lease transaction (those outside one log to
    /// the database's).
    let logger: Logger

    // MARK: Setup

    /// Creates the lease row of every partition of `config` (idempotent).
    func createLeases() async throws {
        let all = Array(0..<config.partitions).map(Int32.init)
        try await database.query("INSERT INTO leases (partition) SELECT unnest(\(all)::int[]) ON CONFLICT DO NOTHING")
    }

    /// The number of lease rows: the partition count of the schema.
    func leaseCount() async throws -> Int {
        try await database.query("SELECT count(*)::int FROM leases").first(Int.self) ?? 0
    }

    // MARK: A heartbeat's transaction

    /// Ends the transaction if it sits idle for half a lease, so a replica paused inside it
    /// does not hold the lease rows beyond its lease.
    func limitIdleTime(on c: PostgresConnection) async throws {
        try await c.query(PostgresQuery(unsafeSQL: "SET LOCAL idle_in_transaction_session_timeout = \(config.leaseDuration.milliseconds / 2)"),
                          logger: logger)
    }

    /// Records this replica as seen now, with its stats (a JSON object).
    func recordHeartbeat(stats: String, on c: PostgresConnection) async throws {
        try await c.query("""
            INSERT INTO replicas (instance, heartbeat_at, stats) VALUES (\(instance), now(), \(stats)::jsonb)
            ON CONFLICT (instance) DO UPDATE SET heartbeat_at = now(), stats = excluded.stats
            """, logger: logger)
    }

    /// The replicas seen within one lease duration (1 if the count reads nothing).
    func liveReplicas(on c: PostgresConnection) async throws -> Int {
        let leaseSeconds = config.leaseDuration.seconds
        return try await c.query("""
            SELECT count(*)::int FROM replicas WHERE heartbeat_at > now() - make_interval(secs => \(leaseSeconds))
            """, logger: logger).first(Int.self) ?? 1
    }

    /// Extends this replica's unexpired leases of `partitions` by one lease duration; returns
    /// those renewed, with their epochs.
    func renew(_ partitions: [Int32], on c: PostgresConnection) async throws -> [Int: Int64] {
        let leaseSeconds = config.leaseDuration.seconds
        var renewed: [Int: Int64] = [:]
        let rows = try await c.query("""
            UPDATE leases SET expires_at = now() + make_interval(secs => \(leaseSeconds))
            WHERE owner = \(instance) AND partition = ANY(\(partitions)::int[]) AND expires_at > clock_timestamp()
            RETURNING partition, epoch
            """, logger: logger)
        for try await (p, e) in rows.decode((Int32, Int64).self) { renewed[Int(p)] = e }
        return renewed
    }

    /// Gives back this replica's leases of `partitions` (free at once for the others).
    func release(_ partitions: [Int32], on c: PostgresConnection) async throws {
        try await c.query("""
            UPDATE leases SET owner = NULL, expires_at = 'epoch' WHERE owner = \(instance) AND partition = ANY(\(partitions)::int[])
            """, logger: logger)
    }

    /// Takes up to `count` free or expired partitions, lowest first, skipping lease rows other
    /// transactions hold; each taken lease's epoch moves on. Returns them with their new epochs.
    func acquire(upTo count: Int, on c: PostgresConnection) async throws -> [Int: Int64] {
        let leaseSeconds = config.leaseDuration.seconds
        var acquired: [Int: Int64] = [:]
        let rows = try await c.query("""
            UPDATE leases SET owner = \(instance), epoch = epoch + 1, expires_at = now() + make_interval(secs => \(leaseSeconds))
            WHERE partition IN (
                SELECT partition FROM leases WHERE owner IS NULL OR expires_at < clock_timestamp()
                ORDER BY partition LIMIT \(count) FOR UPDATE SKIP LOCKED)
            RETURNING partition, epoch
            """, logger: logger)
        for try await (p, e) in rows.decode((Int32, Int64).self) { acquired[Int(p)] = e }
        return acquired
    }

    /// Forgets the replicas not seen for an hour.
    func pruneReplicas(on c: PostgresConnection) async throws {
        try await c.query("DELETE FROM replicas WHERE heartbeat_at < now() - interval '1 hour'", logger: logger)
    }

    // MARK: Shutdown

    /// ``release(_:on:)`` outside a transaction.
    func release(_ partitions: [Int32]) async throws {
        try await database.query("""
            UPDATE leases SET owner = NULL, expires_at = 'epoch' WHERE owner = \(instance) AND partition = ANY(\(partitions)::int[])
            """)
    }

    /// Removes this replica's row from `replicas`.
    func removeReplica() async throws {
        try await database.query("DELETE FROM replicas WHERE instance = \(instance)")
    }
}
