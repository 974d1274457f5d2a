import Foundation
import Logging
import Persistence
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Holds this replica's partition leases.
///
/// Every heartbeat it records itself in `replicas`, renews the leases it holds, gives back
/// partitions beyond its fair share ⌈P/N⌉ (N = live replicas) and takes free or expired ones
/// up to it. Taking a partition increments its epoch: fire writes carry the epoch they were
/// granted and are refused once a newer owner exists (fencing). On graceful shutdown it gives
/// every lease back so the others take over at once instead of after the lease expires.
final class LeaseManager: Service, Sendable {
    typealias Change = @Sendable (_ acquired: [Int: Int64], _ lost: [Int]) async -> Void

    private let database: Database
    private let config: SchedulerConfig
    private let instance: String
    private let logger: Logger
    private let owned = Mutex<[Int: Int64]>([:])
    private let onChange: Change
    private let stats: @Sendable () -> String

    init(database: Database, config: SchedulerConfig, instance: String, logger: Logger,
         stats: @escaping @Sendable () -> String, onChange: @escaping Change) {
        self.database = database
        self.config = config
        self.instance = instance
        self.logger = logger
        self.stats = stats
        self.onChange = onChange
    }

    /// The partitions held now, with their epochs.
    var partitions: [Int: Int64] { owned.withLock { $0 } }

    /// Creates the lease rows (idempotent; the partition count is fixed per deployment).
    func ensurePartitions() async throws {
        let all = Array(0..<config.partitions).map(Int32.init)
        try await database.query("INSERT INTO leases (partition) SELECT unnest(\(all)::int[]) ON CONFLICT DO NOTHING")
        let count = try await database.query("SELECT count(*)::int FROM leases").first(Int.self) ?? 0
        if count != config.partitions {
            throw SchedulerSetupError("the scheduler schema has \(count) partitions but CHRONIR_SCHEDULER_PARTITIONS is \(config.partitions); the partition count is fixed per deployment")
        }
    }

    func run() async throws {
        try await ensurePartitions()
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await self.heartbeat()
                } catch {
                    if Task.isCancelled { break }
                    self.logger.warning("lease heartbeat failed", metadata: ["error": "\(String(reflecting: error))"])
                }
                try? await Task.sleep(for: self.config.heartbeat)
            }
        }
        await releaseAll()
    }

    /// One round: be seen, renew, rebalance.
    func heartbeat() async throws {
        let leaseSeconds = config.leaseDuration.seconds
        let statsJSON = stats()
        let held = Array(owned.withLock { $0.keys }).map(Int32.init)
        let (renewed, acquired, alive): ([Int: Int64], [Int: Int64], Int) = try await database.transaction { c in
            // A replica paused inside this transaction must not hold the lease rows beyond its lease.
            try await c.query(PostgresQuery(unsafeSQL: "SET LOCAL idle_in_transaction_session_timeout = \(config.leaseDuration.milliseconds / 2)"),
                              logger: logger)
            try await c.query("""
                INSERT INTO replicas (instance, heartbeat_at, stats) VALUES (\(instance), now(), \(statsJSON)::jsonb)
                ON CONFLICT (instance) DO UPDATE SET heartbeat_at = now(), stats = excluded.stats
                """, logger: logger)
            let alive = try await c.query("""
                SELECT count(*)::int FROM replicas WHERE heartbeat_at > now() - make_interval(secs => \(leaseSeconds))
                """, logger: logger).first(Int.self) ?? 1
            var renewed: [Int: Int64] = [:]
            let rows = try await c.query("""
                UPDATE leases SET expires_at = now() + make_interval(secs => \(leaseSeconds))
                WHERE owner = \(instance) AND partition = ANY(\(held)::int[]) AND expires_at > clock_timestamp()
                RETURNING partition, epoch
                """, logger: logger)
            for try await (p, e) in rows.decode((Int32, Int64).self) { renewed[Int(p)] = e }
            let target = (config.partitions + max(1, alive) - 1) / max(1, alive)
            var acquired: [Int: Int64] = [:]
            if renewed.count > target {
                let extra = renewed.keys.sorted().suffix(renewed.count - target).map(Int32.init)
                try await c.query("""
                    UPDATE leases SET owner = NULL, expires_at = 'epoch' WHERE owner = \(instance) AND partition = ANY(\(extra)::int[])
                    """, logger: logger)
                for p in extra { renewed[Int(p)] = nil }
            } else if renewed.count < target {
                let rows = try await c.query("""
                    UPDATE leases SET owner = \(instance), epoch = epoch + 1, expires_at = now() + make_interval(secs => \(leaseSeconds))
                    WHERE partition IN (
                        SELECT partition FROM leases WHERE owner IS NULL OR expires_at < clock_timestamp()
                        ORDER BY partition LIMIT \(target - renewed.count) FOR UPDATE SKIP LOCKED)
                    RETURNING partition, epoch
                    """, logger: logger)
                for try await (p, e) in rows.decode((Int32, Int64).self) { acquired[Int(p)] = e }
            }
            try await c.query("DELETE FROM replicas WHERE heartbeat_at < now() - interval '1 hour'", logger: logger)
            return (renewed, acquired, alive)
        }
        let lost = Set(held.map(Int.init)).subtracting(renewed.keys)
        owned.withLock { o in
            o = renewed
            o.merge(acquired) { _, new in new }
        }
        if !acquired.isEmpty || !lost.isEmpty {
            logger.info("partitions changed", metadata: ["acquired": "\(acquired.count)", "lost": "\(lost.count)",
                                                         "held": "\(renewed.count + acquired.count)", "replicas": "\(alive)"])
            await onChange(acquired, Array(lost))
        }
    }

    /// Gives every lease back (graceful shutdown).
    func releaseAll() async {
        let held = Array(owned.withLock { o -> [Int] in
            let k = Array(o.keys)
            o = [:]
            return k
        }).map(Int32.init)
        guard !held.isEmpty else { return }
        do {
            try await database.query("""
                UPDATE leases SET owner = NULL, expires_at = 'epoch' WHERE owner = \(instance) AND partition = ANY(\(held)::int[])
                """)
            try await database.query("DELETE FROM replicas WHERE instance = \(instance)")
            logger.info("released partitions", metadata: ["count": "\(held.count)"])
        } catch {
            logger.warning("could not release partitions; they expire on their own", metadata: ["error": "\(error)"])
        }
    }
}

/// A plain error with a message (configuration problems found at run time).
struct SchedulerSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
