import Foundation
import Outbox
import SchedulerCore
import ServiceKit

/// The scheduler's settings: every `CHRONIR_*` variable it reads beyond the ones every service
/// reads (``ServiceRuntime``), parsed and validated before anything connects.
public struct SchedulerConfig: ServiceConfig {
    /// Partitions of the alarm-id space (`CHRONIR_SCHEDULER_PARTITIONS`, default 256, 1…65 536;
    /// fixed per deployment).
    public var partitions: Int
    /// Lease renewal period (`CHRONIR_LEASE_HEARTBEAT`, default 1 s).
    public var heartbeat: Duration
    /// Lease length (`CHRONIR_LEASE_DURATION`, default 5 s; more than twice the heartbeat).
    public var leaseDuration: Duration
    /// Fires held in memory ahead of time (`CHRONIR_SCHEDULER_HORIZON`, default 1 h).
    public var horizon: Duration
    /// After a takeover, overdue fires younger than this still fire (`CHRONIR_FIRE_GRACE`, default 15 min).
    public var grace: Duration
    /// An occurrence not completed within this is missed (`CHRONIR_MISSED_WINDOW`, default 2 h).
    public var missedWindow: Duration
    /// Wheel tick (`CHRONIR_WHEEL_TICK`, default 10 ms).
    public var tick: Duration
    /// How often new timers are looked for (`CHRONIR_TIMER_POLL`, default 100 ms).
    public var poll: Duration
    /// Timers fired per transaction (`CHRONIR_FIRE_BATCH`, default 2 000, 1…50 000).
    public var batch: Int
    /// Fire transactions in flight at once (`CHRONIR_FIRE_CONCURRENCY`, default 2, 1…32).
    public var concurrency: Int
    /// How often pending timers past due are looked for (`CHRONIR_SWEEP_INTERVAL`, default 5 s).
    public var sweep: Duration
    /// How far past due a pending timer must be for the sweep to take it (`CHRONIR_SWEEP_LAG`, default 2 s).
    public var sweepLag: Duration
    /// How long before its due instant a fire, a warning or a re-fire is announced
    /// (`CHRONIR_FIRE_LEAD`, default 10 s, 0…300 s; 0 announces at the instant). Notifications
    /// and the gateway hold what they prepared until the instant; a change of the alarm in
    /// between withdraws it.
    public var lead: Duration
    /// Fault tests only (`CHRONIR_FAILPOINT_STOP_IN_FIRE=<n>`, 1…1 000 000; default unset, no
    /// failpoint): the n-th fire transaction that passed its lease check stops the process
    /// (SIGSTOP) while it holds the lease rows.
    public var stopInFire: CrashFailpoint?
    /// Fault tests only (`CHRONIR_FAILPOINT_CLOCK_BEHIND`, a duration; default 0): the scheduler
    /// reads its host's clock this much behind, as a host whose clock is off would.
    public var clockBehind: Duration = .zero
    /// How often the offset to the database's clock is measured (`CHRONIR_CLOCK_CHECK_INTERVAL`, 10 s).
    public var clockCheck: Duration
    /// The services the scheduler's replicas push their events to, on those services' request
    /// sockets (`CHRONIR_SCHEDULER_PUSH_TO`, comma-separated service names, default
    /// `notifications,alarms`); an unknown name is refused.
    public var pushTo: [ServiceDirectory.Name]

    public init(environment e: ServiceEnvironment) throws {
        partitions = try e.int("CHRONIR_SCHEDULER_PARTITIONS", 256, in: 1...65_536)
        heartbeat = try e.duration("CHRONIR_LEASE_HEARTBEAT", .seconds(1))
        leaseDuration = try e.duration("CHRONIR_LEASE_DURATION", .seconds(5))
        horizon = try e.duration("CHRONIR_SCHEDULER_HORIZON", .seconds(3600))
        grace = try e.duration("CHRONIR_FIRE_GRACE", .seconds(900))
        missedWindow = try e.duration("CHRONIR_MISSED_WINDOW", .seconds(7200))
        tick = try e.duration("CHRONIR_WHEEL_TICK", .milliseconds(10))
        poll = try e.duration("CHRONIR_TIMER_POLL", .milliseconds(100))
        batch = try e.int("CHRONIR_FIRE_BATCH", 2_000, in: 1...50_000)
        concurrency = try e.int("CHRONIR_FIRE_CONCURRENCY", 2, in: 1...32)
        sweep = try e.duration("CHRONIR_SWEEP_INTERVAL", .seconds(5))
        sweepLag = try e.duration("CHRONIR_SWEEP_LAG", .seconds(2))
        lead = try e.duration("CHRONIR_FIRE_LEAD", .seconds(10))
        clockBehind = try e.duration("CHRONIR_FAILPOINT_CLOCK_BEHIND", .zero)
        clockCheck = try e.duration("CHRONIR_CLOCK_CHECK_INTERVAL", .seconds(10))
        if e.optional("CHRONIR_FAILPOINT_STOP_IN_FIRE") != nil {
            stopInFire = CrashFailpoint(after: try e.int("CHRONIR_FAILPOINT_STOP_IN_FIRE", 1, in: 1...1_000_000), signal: SIGSTOP)
        }
        guard lead >= .zero, lead <= .seconds(300) else {
            throw ServiceEnvironment.Invalid("CHRONIR_FIRE_LEAD must be between 0 and 300 seconds")
        }
        guard leaseDuration > heartbeat * 2 else {
            throw ServiceEnvironment.Invalid("CHRONIR_LEASE_DURATION must be more than twice CHRONIR_LEASE_HEARTBEAT")
        }
        pushTo = try e.list("CHRONIR_SCHEDULER_PUSH_TO", ["notifications", "alarms"]).map { name in
            guard let service = ServiceDirectory.Name(rawValue: name) else {
                throw ServiceEnvironment.Invalid("CHRONIR_SCHEDULER_PUSH_TO: unknown service \"\(name)\"")
            }
            return service
        }
    }
}

extension SchedulerConfig {
    /// How early a timer of `kind` fires (``FireRules/lead(of:lead:)``): missed checks at their
    /// instant, everything that rings `lead` ahead.
    func lead(of kind: TimerKind) -> Int64 { FireRules.lead(of: kind, lead: lead.milliseconds) }
}

extension Duration {
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}

/// Wall-clock milliseconds since the epoch.
func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
