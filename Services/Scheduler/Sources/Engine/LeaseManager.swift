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

    private let store: LeaseStore
    private let owned = Mutex<[Int: Int64]>([:])
    private let onChange: Change
    private let stats: @Sendable () -> String

    /// `store`: the lease statements, of this replica (its instance), with the configuration
    /// and the logger this manager uses too.
    init(store: LeaseStore, stats: @escaping @Sendable () -> String, onChange: @escaping Change) {
        self.store = store
        self.stats = stats
        self.onChange = onChange
    }

    private var config: SchedulerConfig { store.config }
    private var logger: Logger { store.logger }

    /// The partitions held now, with their epochs.
    var partitions: [Int: Int64] { owned.withLock { $0 } }

    /// Creates the lease rows (idempotent; the partition count is fixed per deployment).
    func ensurePartitions() async throws {
        try await store.createLeases()
        let count = try await store.leaseCount()
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
        let statsJSON = stats()
        let held = Array(owned.withLock { $0.keys }).map(Int32.init)
        let (renewed, acquired, alive): ([Int: Int64], [Int: Int64], Int) = try await store.database.transaction { c in
            // A replica paused inside this transaction must not hold the lease rows beyond its lease.
            try await self.store.limitIdleTime(on: c)
            try await self.store.recordHeartbeat(stats: statsJSON, on: c)
            let alive = try await self.store.liveReplicas(on: c)
            var renewed = try await self.store.renew(held, on: c)
            let target = (self.config.partitions + max(1, alive) - 1) / max(1, alive)
            var acquired: [Int: Int64] = [:]
            if renewed.count > target {
                let extra = renewed.keys.sorted().suffix(renewed.count - target).map(Int32.init)
                try await self.store.release(extra, on: c)
                for p in extra { renewed[Int(p)] = nil }
            } else if renewed.count < target {
                acquired = try await self.store.acquire(upTo: target - renewed.count, on: c)
            }
            try await self.store.pruneReplicas(on: c)
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
            try await store.release(held)
            try await store.removeReplica()
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
