import Foundation
import Messaging
import Outbox
import Persistence
import ServiceKit

/// The scheduler: partition leases across replicas, a timing wheel of due fires, exactly-once
/// fire records, pre-alarm warnings, snoozes, missed windows and completion fan-out.
public enum SchedulerService: ChronirService {
    /// The service's name (``ChronirService/name``).
    public static let name = "scheduler"
    /// The schema migrations, applied at start.
    public static let migrations = SchedulerMigrations.all

    /// Builds the running parts with `config` (used by `main`, which reads it before anything connects).
    public static func build(runtime: ServiceRuntime, database: Database, parts: ServiceParts, config: SchedulerConfig) async throws -> ServiceParts {
        var parts = parts
        var router = RPCRouter()
        // A scaled producer: its replicas push events to the stable consumers' request sockets.
        let consumers = try config.pushTo.map { try runtime.rpcClient(to: $0) }
        let outbox = try runtime.makeOutbox(database: database, sink: PushEventSink(clients: consumers, telemetry: runtime.telemetry), router: &router)
        let store = TimerStore(database: database, config: config, outbox: outbox.writer, instance: runtime.instance)
        let clock = SchedulerClock(database: database, telemetry: runtime.telemetry, interval: config.clockCheck, behind: config.clockBehind)
        // The offset is known before the first fire.
        try? await clock.measure()
        let engine = FireEngine(store: store, config: config, telemetry: runtime.telemetry, clock: clock)
        let leaseStore = LeaseStore(database: database, config: config, instance: runtime.instance, logger: runtime.logs.logger("leases"))
        let leases = LeaseManager(store: leaseStore, stats: { engine.statsJSON() }) { acquired, lost in
            engine.partitionsChanged(acquired: acquired, lost: lost)
        }
        StatusHandler(store: store).register(into: &router)
        let alarms = try runtime.makeSubscriber(
            to: .alarms, handlers: AlarmsEventHandlers(store: store, outbox: outbox.writer, engine: engine).handlers, database: database, wakes: outbox.writer)
        parts.services.append(outbox.relay)
        parts.services.append(alarms.subscriber)
        parts.services.append(clock)
        parts.services.append(engine)
        parts.services.append(leases)
        parts.services.append(try runtime.makeRPCServer(router: router, health: parts.health))
        return parts
    }
}
