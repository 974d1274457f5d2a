import Contracts
import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO
import Schedules
import ServiceKit
import Support
import Synchronization

/// Scheduler replicas as real processes around two in-process stand-ins that speak the real
/// protocols: an "alarms" producer (a real outbox, relay, PUB socket and replay) whose events
/// the replicas consume, and a "notifications" consumer (a real pushed subscriber applying
/// exactly once into its schema) that records every scheduler event it is handed.
final class SchedulerCluster: Sendable {
    let url: String
    let alarmsPorts = (rpc: freePort(), pub: freePort())
    let notificationsPort = freePort()
    let replicaPorts: [Int]
    let writer = Mutex<OutboxWriter?>(nil)
    let standIns = Mutex<[RunningService]>([])
    let replicas = Mutex<[String: TestProcess]>([:])
    let extraEnvironment: [String: String]

    init(label: String, replicas: Int, environment: [String: String] = [:]) async throws {
        url = try await TestDatabase.create(label)
        replicaPorts = (0..<replicas).map { _ in freePort() }
        extraEnvironment = environment
    }

    var schedulerEndpoints: String { replicaPorts.map { "tcp://127.0.0.1:\($0)" }.joined(separator: ",") }

    func baseEnvironment(_ service: String) -> [String: String] {
        var env = [
            "DATABASE_URL": url,
            "CHRONIR_OPS_PORT": "0",
            "CHRONIR_LOG_LEVEL": ProcessInfo.processInfo.environment["CHRONIR_TEST_LOG_LEVEL"] ?? "info",
            "CHRONIR_LOG_FORMAT": "text",
            "CHRONIR_INSTANCE_ID": "\(service)-test",
            "CHRONIR_OUTBOX_POLL": "100ms",
            "CHRONIR_OUTBOX_HEARTBEAT": "300ms",
            "CHRONIR_ALARMS_RPC": "tcp://127.0.0.1:\(alarmsPorts.rpc)",
            "CHRONIR_ALARMS_EVENTS": "tcp://127.0.0.1:\(alarmsPorts.pub)",
            "CHRONIR_NOTIFICATIONS_RPC": "tcp://127.0.0.1:\(notificationsPort)",
            "CHRONIR_SCHEDULER_RPC": schedulerEndpoints,
            "CHRONIR_SCHEDULER_PUSH_TO": "notifications",
            "CHRONIR_BUS_KEYS": TestBusKeys.directory,
        ]
        env.merge(extraEnvironment) { _, new in new }
        return env
    }

    /// Starts the two stand-ins.
    func startStandIns() throws {
        let quiet = ProcessInfo.processInfo.environment["CHRONIR_TEST_LOG_LEVEL"] ?? "critical"
        var alarmsEnv = baseEnvironment("alarms")
        alarmsEnv["CHRONIR_LOG_LEVEL"] = quiet
        alarmsEnv["CHRONIR_RPC_BIND"] = "tcp://127.0.0.1:\(alarmsPorts.rpc)"
        alarmsEnv["CHRONIR_PUB_BIND"] = "tcp://127.0.0.1:\(alarmsPorts.pub)"
        let alarms = try RunningService(name: "alarms", environment: alarmsEnv, migrations: [OutboxSchema.migration]) { runtime, db, parts in
            var parts = parts
            var router = RPCRouter()
            let outbox = try runtime.makePublishedOutbox(database: db, router: &router)
            self.writer.withLock { $0 = outbox.writer }
            parts.services.append(outbox.relay)
            parts.services.append(try runtime.makeRPCServer(router: router, health: parts.health))
            return parts
        }
        var notificationsEnv = baseEnvironment("notifications")
        notificationsEnv["CHRONIR_LOG_LEVEL"] = quiet
        notificationsEnv["CHRONIR_RPC_BIND"] = "tcp://127.0.0.1:\(notificationsPort)"
        let received = Migration(2, "received", ["""
            CREATE TABLE received (seq bigint PRIMARY KEY, type text NOT NULL, alarm_id text NOT NULL,
                occurrence_at timestamptz NOT NULL, snooze_count int NOT NULL, received_at timestamptz NOT NULL DEFAULT now())
            """])
        let notifications = try RunningService(name: "notifications", environment: notificationsEnv,
                                               migrations: [OutboxSchema.migration, received]) { runtime, db, parts in
            var parts = parts
            var router = RPCRouter()
            var handlers = EventHandlers(SchedulerEvents.self)
            handlers.ignore(SchedulerEvents.preAlarmDue, SchedulerEvents.occurrenceMissed, SchedulerEvents.completionPush, SchedulerEvents.fireWithdrawn)
            handlers.on(SchedulerEvents.alarmFired) { e, ctx, c in
                try await c.query("""
                    INSERT INTO received (seq, type, alarm_id, occurrence_at, snooze_count)
                    VALUES (\(ctx.event.seq), \(ctx.envelope.type), \(e.alarmId), \(e.occurrenceAt), \(e.snoozeCount))
                    """, logger: ctx.logger)
            }
            let sub = try runtime.makePushedSubscriber(to: .scheduler, handlers: handlers, database: db, router: &router)
            parts.services.append(sub.subscriber)
            parts.services.append(try runtime.makeRPCServer(router: router, health: parts.health))
            return parts
        }
        standIns.withLock { $0 = [alarms, notifications] }
    }

    /// Starts scheduler replica `index` as a process.
    @discardableResult
    func startReplica(_ index: Int, environment: [String: String] = [:]) throws -> TestProcess {
        var env = baseEnvironment("scheduler")
        env["CHRONIR_INSTANCE_ID"] = "replica-\(index)"
        env["CHRONIR_RPC_BIND"] = "tcp://127.0.0.1:\(replicaPorts[index])"
        env.merge(environment) { _, new in new }
        let p = try TestProcess("scheduler", environment: env, label: "scheduler-\(index)")
        replicas.withLock { $0["replica-\(index)"] = p }
        return p
    }

    func replica(_ index: Int) -> TestProcess { replicas.withLock { $0["replica-\(index)"]! } }

    /// Publishes alarm states as the alarms service would.
    func publish(_ states: [AlarmsEvents.AlarmState]) async throws {
        let ok = await eventually(timeout: .seconds(30)) { writer.withLock { $0 } != nil }
        guard ok, let writer = writer.withLock({ $0 }) else { throw TestSetupError("the alarms stand-in did not start") }
        try await withDatabase(url: url, schema: "alarms") { db in
            var start = 0
            while start < states.count {
                let chunk = states[start..<min(states.count, start + 500)]
                try await db.transaction { c in
                    for s in chunk { try await writer.append(AlarmsEvents.alarmUpserted, s, actor: nil, on: c) }
                }
                start += 500
            }
        }
        writer.committed()
    }

    /// Owners of the partitions now: instance → count (unowned or expired leases left out).
    func owners() async throws -> [String: Int] {
        try await withDatabase(url: url, schema: "scheduler") { db in
            var out: [String: Int] = [:]
            let rows = try await db.query("SELECT owner, count(*)::int FROM leases WHERE owner IS NOT NULL AND expires_at > now() GROUP BY owner")
            for try await (owner, n) in rows.decode((String, Int).self) { out[owner] = n }
            return out
        }
    }

    /// Runs a scalar query in `schema`.
    func count(_ schema: String, _ sql: String) async throws -> Int {
        try await withDatabase(url: url, schema: schema) { db in
            try await db.query(PostgresQuery(unsafeSQL: sql)).first(Int.self) ?? 0
        }
    }

    /// (partition, epoch) rows of a query in the scheduler schema.
    func pairs(_ sql: String) async throws -> [(Int32, Int64)] {
        try await withDatabase(url: url, schema: "scheduler") { db in
            var out: [(Int32, Int64)] = []
            for try await row in try await db.query(PostgresQuery(unsafeSQL: sql)).decode((Int32, Int64).self) { out.append(row) }
            return out
        }
    }

    /// Fire timers still pending in the partitions `owner` holds now.
    func pendingFires(ownedBy owner: String) async throws -> Int {
        try await count("scheduler", """
            SELECT count(*)::int FROM timers t JOIN leases l USING (partition)
            WHERE t.kind = 'fire' AND l.owner = '\(owner)' AND l.expires_at > now()
            """)
    }

    /// Waits until every scheduler event committed so far is numbered and applied by the
    /// notifications stand-in: anything announced twice would be in `received` by then.
    func caughtUp(timeout: Duration = .seconds(30)) async -> Bool {
        await eventually(timeout: timeout, every: .milliseconds(100)) {
            guard let unsequenced = try? await self.count("scheduler", "SELECT count(*)::int FROM outbox WHERE seq IS NULL"),
                  let head = try? await self.count("scheduler", "SELECT coalesce(max(last_seq), 0)::int FROM outbox_streams WHERE stream = 'scheduler'"),
                  let at = try? await self.count("notifications", "SELECT coalesce(max(seq), 0)::int FROM consumer_checkpoints WHERE stream = 'scheduler'")
            else { return false }
            return unsequenced == 0 && at == head
        }
    }

    func shutdown() async {
        for p in replicas.withLock({ Array($0.values) }) {
            p.signal(SIGCONT)  // a replica a failed test left stopped would not hear SIGTERM
            await p.terminate()
        }
        for s in standIns.withLock({ $0 }).reversed() { await s.stop() }
    }

    /// Logs of every replica (for failure messages).
    var logs: String {
        replicas.withLock { r in r.sorted { $0.key < $1.key }.map { "--- \($0.key)\n\($0.value.output.suffix(3000))" }.joined(separator: "\n") }
    }
}

/// An alarm state due at `at` (no warnings), as the alarms service would publish it.
func alarmState(_ id: String, at: Date, version: Int = 1, members: [String] = ["u1"]) -> AlarmsEvents.AlarmState {
    AlarmsEvents.AlarmState(
        id: id, ownerId: members[0], title: "Alarm \(id)",
        schedule: Schedule(type: "custom", intervalDays: 1, timeOfDay: "09:00", timezone: "UTC", startDate: Date(timeIntervalSince1970: 0)),
        nextFireDate: at, isActive: true, isPaused: false, deleted: false, preAlarmOffsetsMinutes: [], members: members,
        alertMembers: members, groupId: nil, assignedTo: nil, snoozeDurationMinutes: 10, version: version)
}
