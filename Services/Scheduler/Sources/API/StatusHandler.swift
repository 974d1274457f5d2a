import Contracts
import Foundation
import Messaging

/// `scheduler.status`: replicas, partitions, epochs, timers and fire lateness, from the shared
/// tables (any replica answers for all).
struct StatusHandler: Sendable {
    let store: TimerStore

    func register(into router: inout RPCRouter) {
        router.on(SchedulerMethods.Status.self) { _, _ in try await status() }
    }

    func status() async throws -> SchedulerStatus {
        let replicas = try await store.replicaStatuses()
        let counts = try await store.statusCounts()
        return SchedulerStatus(partitions: store.config.partitions, unownedPartitions: counts.unownedPartitions, replicas: replicas,
                               timersInTable: counts.timers, timersInHorizon: counts.timersInHorizon, firesLastMinute: counts.firesLastMinute)
    }
}
