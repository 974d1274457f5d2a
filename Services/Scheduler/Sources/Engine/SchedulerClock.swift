import Foundation
import Logging
import Messaging
import Persistence
import ServiceLifecycle
import Synchronization

/// The scheduler's time: PostgreSQL's clock (`clock_timestamp()`), carried between readings by
/// this host's monotonic clock. Read at start and every ``interval``; each reading keeps the
/// database's time less the midpoint of its round trip on the monotonic clock, from the
/// fastest of three (the least error). Every replica fires by the same clock, the one leases
/// expire by: a host whose wall clock is off neither fires early or late nor reports its own
/// lateness as about 0, and a step of the host's clock (NTP, an operator) moves nothing
/// (issue 58: the wheel used to run on `Date()`). How far the host's wall clock is from the
/// database's is `chronir_scheduler_clock_offset_ms`; past ``warnAbove`` it is logged, since the
/// host needs fixing even though fires stay on time.
final class SchedulerClock: Service, Sendable {
    private let database: Database?
    private let telemetry: Telemetry
    /// The database's time less the monotonic clock, in milliseconds.
    private let offset: Atomic<Int64>
    /// Fault tests only (`CHRONIR_FAILPOINT_CLOCK_BEHIND`): how far behind this host's clock reads.
    private let behind: Int64
    let interval: Duration
    static let warnAbove: Int64 = 250

    /// `database` nil: this host's clock as it is (tests of the engine alone).
    init(database: Database?, telemetry: Telemetry, interval: Duration = .seconds(10), behind: Duration = .zero) {
        self.database = database
        self.telemetry = telemetry
        self.interval = interval
        self.behind = behind.milliseconds
        // Until the first reading: this host's wall clock.
        self.offset = Atomic(nowMilliseconds() - self.behind - monotonicMilliseconds())
    }

    /// This host's wall clock (as the failpoint has it), in milliseconds since the epoch.
    private func wall() -> Int64 { nowMilliseconds() - behind }

    /// The scheduler's now, in milliseconds since the epoch.
    func now() -> Int64 { monotonicMilliseconds() + offset.load(ordering: .relaxed) }

    /// The scheduler's now as a date.
    func date() -> Date { Date(timeIntervalSince1970: Double(now()) / 1000) }

    /// How far this host's wall clock is behind the scheduler's now, in milliseconds.
    var wallOffsetMilliseconds: Int64 { now() - wall() }

    /// Measures the offset once: the fastest of three round trips.
    func measure() async throws {
        guard let database else { return }
        var best: (rtt: Int64, offset: Int64)?
        for _ in 0..<3 {
            let t0 = monotonicMilliseconds()
            guard let db = try await database.query("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint").first(Int64.self) else { return }
            let t1 = monotonicMilliseconds()
            let sample = (rtt: t1 - t0, offset: db - (t0 + t1) / 2)
            if best.map({ sample.rtt < $0.rtt }) ?? true { best = sample }
        }
        guard let best else { return }
        let before = wallOffsetMilliseconds
        offset.store(best.offset, ordering: .relaxed)
        let wallOffset = wallOffsetMilliseconds
        telemetry.gauge("chronir_scheduler_clock_offset_ms").record(wallOffset)
        if abs(wallOffset) > Self.warnAbove, abs(wallOffset - before) > Self.warnAbove / 2 {
            telemetry.logger.warning("this host's clock is off from the database's; firing by the database's",
                                     metadata: ["offsetMs": "\(wallOffset)", "roundTripMs": "\(best.rtt)"])
        }
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do { try await self.measure() } catch {
                    self.telemetry.logger.debug("clock offset not measured: \(error)")
                }
                try? await Task.sleep(for: self.interval)
            }
        }
    }
}
