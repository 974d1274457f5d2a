import Contracts
import Foundation
import Messaging
import Persistence
import PostgresNIO

/// `scheduler.status`: replicas, partitions, epochs, timers and fire lateness, from the shared
/// tables (any replica answers for all).
struct StatusHandler: Sendable {
    let database: Database
    let config: SchedulerConfig

    func register(into router: inout RPCRouter) {
        router.on(SchedulerMethods.Status.self) { _, _ in try await status() }
    }

    struct Stats: Decodable {
        var timersInWheel: Int?
        var firesLastMinute: Int?
        var latenessP50Ms: Double?
        var latenessP99Ms: Double?
        var latenessMaxMs: Double?
    }

    func status() async throws -> SchedulerStatus {
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
            let s = (try? JSONCoding.decoder().decode(Stats.self, from: Data(statsText.utf8))) ?? Stats()
            replicas.append(.init(instance: instance, heartbeatAt: heartbeat, alive: alive, partitions: count, minEpoch: minEpoch,
                                  maxEpoch: maxEpoch, timersInWheel: s.timersInWheel ?? 0, firesLastMinute: s.firesLastMinute ?? 0,
                                  latenessP50Ms: s.latenessP50Ms ?? 0, latenessP99Ms: s.latenessP99Ms ?? 0, latenessMaxMs: s.latenessMaxMs ?? 0))
        }
        let horizon = config.horizon.seconds
        let counts = try await database.query("""
            SELECT (SELECT count(*)::int FROM leases WHERE owner IS NULL OR expires_at < now()),
                   (SELECT count(*)::int FROM timers),
                   (SELECT count(*)::int FROM timers WHERE due_at < now() + make_interval(secs => \(horizon))),
                   (SELECT count(*)::int FROM fires WHERE fired_at > now() - interval '1 minute')
            """)
        var unowned = 0, timers = 0, inHorizon = 0, fires = 0
        for try await (u, t, h, f) in counts.decode((Int, Int, Int, Int).self) { (unowned, timers, inHorizon, fires) = (u, t, h, f) }
        return SchedulerStatus(partitions: config.partitions, unownedPartitions: unowned, replicas: replicas, timersInTable: timers,
                               timersInHorizon: inHorizon, firesLastMinute: fires)
    }
}
