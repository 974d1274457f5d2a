import Contracts
import Foundation
import Messaging
import Persistence
import PostgresNIO

/// The SQL of `scheduler.status` (``StatusHandler``): the replicas, leases, timers and fires
/// tables, shared by every replica.
extension TimerStore {
    /// What a replica reports of itself in its heartbeat's `stats` (a missing field reads as 0).
    struct ReplicaStats: Decodable, Sendable {
        var timersInWheel: Int?
        var firesLastMinute: Int?
        var latenessP50Ms: Double?
        var latenessP99Ms: Double?
        var latenessMaxMs: Double?
    }

    /// Every replica in `replicas`, by name: its last heartbeat, whether that was within a lease
    /// duration, the partitions it holds unexpired (count and range of epochs) and its stats.
    func replicaStatuses() async throws -> [SchedulerStatus.Replica] {
        let lease = config.leaseDuration.seconds
        var replicas: [SchedulerStatus.Replica] = []
        let rows = try await database.query("""
            SELECT r.instance, r.heartbeat_at, r.heartbeat_at > now() - make_interval(secs => \(lease)), r.stats::text,
                (SELECT count(*)::int FROM leases l WHERE l.owner = r.instance AND l.expires_at > now()),
                (SELECT min(epoch) FROM leases l WHERE l.owner = r.instance AND l.expires_at > now()),
                (SELECT max(epoch) FROM leases l WHERE l.owner = r.instance AND l.expires_at > now())
            FROM replicas r ORDER BY r.instance
            """)
        for try await (instance, heartbeat, alive, statsText, count, minEpoch, maxEpoch) in rows.decode((String, Date, Bool, String, Int, Int64?, Int64?).self) {
            let s = (try? JSONCoding.decoder().decode(ReplicaStats.self, from: Data(statsText.utf8))) ?? ReplicaStats()
            replicas.append(.init(instance: instance, heartbeatAt: heartbeat, alive: alive, partitions: count, minEpoch: minEpoch,
                                  maxEpoch: maxEpoch, timersInWheel: s.timersInWheel ?? 0, firesLastMinute: s.firesLastMinute ?? 0,
                                  latenessP50Ms: s.latenessP50Ms ?? 0, latenessP99Ms: s.latenessP99Ms ?? 0, latenessMaxMs: s.latenessMaxMs ?? 0))
        }
        return replicas
    }

    /// Counts across the tables: partitions unowned or with an expired lease, pending timers
    /// (all, and those due within the horizon: by `timers_partition_due`, one range per
    /// partition) and fires of the last minute.
    func statusCounts() async throws -> (unownedPartitions: Int, timers: Int, timersInHorizon: Int, firesLastMinute: Int) {
        let horizon = config.horizon.seconds
        let counts = try await database.query("""
            SELECT (SELECT count(*)::int FROM leases WHERE owner IS NULL OR expires_at < now()),
                   (SELECT count(*)::int FROM timers),
                   (SELECT count(*)::int FROM timers WHERE partition = ANY(ARRAY(SELECT partition FROM leases))
                        AND due_at < now() + make_interval(secs => \(horizon))),
                   (SELECT count(*)::int FROM fires WHERE fired_at > now() - interval '1 minute')
            """)
        var unowned = 0, timers = 0, inHorizon = 0, fires = 0
        for try await (u, t, h, f) in counts.decode((Int, Int, Int, Int).self) { (unowned, timers, inHorizon, fires) = (u, t, h, f) }
        return (unowned, timers, inHorizon, fires)
    }
}
