import Foundation
import Histogram
import SchedulerCore
import Logging
import Messaging
import Persistence
import ServiceLifecycle
import Synchronization
import TimingWheel

/// The replica's clock of due timers: a timing wheel holding the timers of its partitions due
/// within the horizon, fed from the timers table, firing what comes due in batched
/// transactions (``TimerStore/fire(ids:owned:missed:)``).
final class FireEngine: Service, Sendable {
    private let store: TimerStore
    private let config: SchedulerConfig
    private let telemetry: Telemetry
    private let wheel: Mutex<TimingWheel>
    private let owned = Mutex<[Int: Int64]>([:])
    private let due = WakeSignal()
    private let load = WakeSignal()
    private let lastSeen = Atomic<Int64>(-1)
    private let loadedUntil = Atomic<Int64>(0)
    private let pendingTakeovers = Mutex<[Int: Int64]>([:])
    private let lateness = Mutex(LatenessWindow())
    private let inFlight: AsyncSemaphore
    private let sweepRequested = Atomic<Bool>(false)
    private let firing = Atomic<Int>(0)

    /// The time fires are due by (the database's, ``SchedulerClock``).
    private let clock: SchedulerClock

    init(store: TimerStore, config: SchedulerConfig, telemetry: Telemetry, clock: SchedulerClock? = nil) {
        self.store = store
        self.config = config
        self.telemetry = telemetry
        let clock = clock ?? SchedulerClock(database: nil, telemetry: telemetry)
        self.clock = clock
        self.inFlight = AsyncSemaphore(config.concurrency)
        self.wheel = Mutex(TimingWheel(now: clock.now(), tick: max(1, config.tick.milliseconds)))
    }

    /// Timers held in memory.
    var timersInWheel: Int { wheel.withLock { $0.count } }

    /// JSON of this replica's figures, written with each lease heartbeat.
    func statsJSON() -> String {
        let s = lateness.withLock { $0.snapshot() }
        let wheelCount = timersInWheel
        let bytes = wheel.withLock { $0.bytesPerTimer }
        let held = owned.withLock { $0.count }
        telemetry.gauge("chronir_scheduler_timers_in_wheel").record(wheelCount)
        telemetry.gauge("chronir_scheduler_partitions_held").record(held)
        telemetry.gauge("chronir_scheduler_fire_lateness_p99_ms").record(s.p99)
        return #"{"timersInWheel":\#(wheelCount),"bytesPerTimer":\#(Int(bytes)),"firesLastMinute":\#(s.count),"latenessP50Ms":\#(s.p50),"latenessP99Ms":\#(s.p99),"latenessMaxMs":\#(s.max)}"#
    }

    /// Called by the lease manager when partitions come and go.
    func partitionsChanged(acquired: [Int: Int64], lost: [Int]) {
        owned.withLock { o in
            for p in lost { o[p] = nil }
            o.merge(acquired) { _, new in new }
        }
        if !lost.isEmpty { pendingTakeovers.withLock { t in for p in lost where acquired[p] == nil { t[p] = nil } } }
        if !acquired.isEmpty {
            pendingTakeovers.withLock { $0.merge(acquired) { _, new in new } }
            load.signal()
        }
    }

    /// Asks the loader to look for new timers now (after this process wrote some).
    func timersChanged() { load.signal() }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.tickLoop() }
                group.addTask { await self.loadLoop() }
            }
        }
    }

    // MARK: - Firing

    private func tickLoop() async {
        while !Task.isCancelled {
            let now = clock.now()
            let dueNow = wheel.withLock { $0.advance(to: now) }
            if !dueNow.isEmpty { await fire(dueNow.map { WheelKey(raw: $0.key) }, missed: []) }
            let next = wheel.withLock { $0.nextExpiration } ?? (now + 1000)
            let wait = max(1, min(next - clock.now(), 1000))
            await due.wait(timeout: .milliseconds(wait))
        }
    }

    /// Fires `keys` in batches, a few transactions at a time, each fenced by the epochs of
    /// the partitions it touches.
    private func fire(_ keys: [WheelKey], missed: Set<Int64>) async {
        let snapshot = owned.withLock { $0 }
        firing.add(1, ordering: .relaxed)
        defer { firing.subtract(1, ordering: .relaxed) }
        await withTaskGroup(of: Void.self) { group in
            var start = 0
            while start < keys.count {
                let batch = keys[start..<min(keys.count, start + config.batch)]
                start += config.batch
                var epochs: [Int: Int64] = [:]
                for k in batch { epochs[k.partition] = snapshot[k.partition] }
                let ids = batch.map(\.id)
                // Shutting down: the rest stay pending for the next owner.
                guard await inFlight.acquire() else { break }
                group.addTask {
                    defer { self.inFlight.release() }
                    await self.fireBatch(ids, owned: epochs, missed: missed)
                }
            }
        }
    }

    private func fireBatch(_ ids: [Int64], owned: [Int: Int64], missed: Set<Int64>) async {
        var delay = Duration.milliseconds(50)
        for attempt in 0..<8 {
            if Task.isCancelled { return }  // shutting down: the timers stay pending for the next owner
            do {
                let result = try await withDeadline(config.leaseDuration) { [store, clock] in try await store.fire(ids: ids, owned: owned, missed: missed, now: clock.date()) }
                if result.fenced { requestSweep() }
                let now = clock.now()
                lateness.withLock { w in for f in result.fired { w.record(now - f.due) } }
                for f in result.fired {
                    telemetry.timer("chronir_scheduler_fire_lateness_seconds", [("kind", f.kind)]).recordMilliseconds(now - f.due)
                }
                telemetry.counter("chronir_scheduler_fires_total").increment(by: result.fired.count)
                if result.skipped > 0 { telemetry.counter("chronir_scheduler_fires_skipped_total").increment(by: result.skipped) }
                return
            } catch {
                telemetry.logger.warning("fire batch failed; retrying", metadata: ["attempt": "\(attempt)", "timers": "\(ids.count)",
                                                                                   "error": "\(String(reflecting: error))"])
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
            }
        }
        // The timers stay in the table: the sweep finds them again.
        requestSweep()
        telemetry.logger.error("fire batch abandoned after retries; timers remain pending", metadata: ["timers": "\(ids.count)"])
    }

    // MARK: - Loading

    private func loadLoop() async {
        var nextTopUp = ContinuousClock.now
        var nextSweep = ContinuousClock.now + config.sweep
        while !Task.isCancelled {
            do {
                if lastSeen.load(ordering: .relaxed) < 0 {
                    lastSeen.store(try await store.maxTimerID(), ordering: .relaxed)
                    loadedUntil.store(clock.now() + config.horizon.milliseconds, ordering: .relaxed)
                }
                try await takeOver()
                try await loadNew()
                if ContinuousClock.now >= nextTopUp {
                    try await topUp()
                    nextTopUp = ContinuousClock.now + .seconds(30)
                }
                // The periodic sweep waits while a burst is being fired (its timers are overdue but queued).
                let periodic = ContinuousClock.now >= nextSweep && firing.load(ordering: .relaxed) == 0
                if periodic || sweepRequested.exchange(false, ordering: .relaxed) {
                    await sweepOverdue()
                    nextSweep = ContinuousClock.now + config.sweep
                }
            } catch {
                if Task.isCancelled { break }
                telemetry.logger.warning("loading timers failed; retrying", metadata: ["error": "\(String(reflecting: error))"])
            }
            await load.wait(timeout: config.poll)
        }
    }

    private func schedule(_ timers: [TimerStore.Pending]) {
        guard !timers.isEmpty else { return }
        wheel.withLock { w in
            for t in timers { w.schedule(key: WheelKey(id: t.id, partition: t.partition).raw, at: FireRules.fireAt(due: t.due, kind: t.kind, lead: config.lead.milliseconds)) }
        }
        due.signal()
    }

    /// Timers written since the last look, in owned partitions, within the horizon.
    private func loadNew() async throws {
        let parts = Array(owned.withLock { $0.keys })
        guard !parts.isEmpty else { return }
        let after = lastSeen.load(ordering: .relaxed)
        let until = Date(timeIntervalSince1970: Double(loadedUntil.load(ordering: .relaxed)) / 1000)
        // Moving past timers beyond the horizon is safe: the top-up runs after this poll in the
        // same loop, so its snapshot holds every timer this one read.
        let found = try await withDeadline(config.leaseDuration) { [store] in try await store.newTimers(after: after, partitions: parts, until: until) }
        if let lastID = found.lastID { lastSeen.store(max(after, lastID), ordering: .relaxed) }
        schedule(found.due)
    }

    /// Moves the horizon forward: timers that came within reach since the last top-up.
    private func topUp() async throws {
        let parts = Array(owned.withLock { $0.keys })
        let from = loadedUntil.load(ordering: .relaxed)
        let until = clock.now() + config.horizon.milliseconds
        guard until > from else { return }
        if !parts.isEmpty {
            let (start, end) = (Date(timeIntervalSince1970: Double(from) / 1000), Date(timeIntervalSince1970: Double(until) / 1000))
            schedule(try await withDeadline(config.leaseDuration) { [store] in try await store.timers(partitions: parts, from: start, until: end) })
        }
        loadedUntil.store(until, ordering: .relaxed)
    }

    private func requestSweep() {
        sweepRequested.store(true, ordering: .relaxed)
        load.signal()
    }

    /// Timers of owned partitions that should have fired by now but are still pending: a batch
    /// fenced or abandoned, a timer committed out of id order. They fire now.
    private func sweepOverdue() async {
        let parts = Array(owned.withLock { $0.keys })
        guard !parts.isEmpty else { return }
        do {
            // Overdue means past the instant it should have fired at: its due instant less its lead.
            let now = clock.now()
            let (lead, lag) = (config.lead.milliseconds, config.sweepLag.milliseconds)
            let until = Date(timeIntervalSince1970: Double(now - lag + lead) / 1000)
            let overdue = try await withDeadline(config.leaseDuration) { [store] in try await store.timers(partitions: parts, from: nil, until: until) }
                .filter { FireRules.isOverdue(due: $0.due, kind: $0.kind, now: now, lead: lead, sweepLag: lag) }
            guard !overdue.isEmpty else { return }
            telemetry.logger.info("sweeping overdue timers", metadata: ["timers": "\(overdue.count)"])
            let (later, grace) = (clock.now(), config.grace.milliseconds)
            let tooOld = Set(overdue.filter { FireRules.isPastGrace(due: $0.due, kind: $0.kind, now: later, grace: grace) }.map(\.id))
            await fire(overdue.map { WheelKey(id: $0.id, partition: $0.partition) }, missed: tooOld)
        } catch {
            telemetry.logger.warning("sweeping overdue timers failed", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    /// Newly acquired partitions: everything due within the horizon. Overdue fires within the
    /// grace window fire at once; older ones are recorded as missed.
    private func takeOver() async throws {
        let taken = pendingTakeovers.withLock { t -> [Int: Int64] in
            let c = t
            t = [:]
            return c
        }
        guard !taken.isEmpty else { return }
        let now = clock.now()
        let until = Date(timeIntervalSince1970: Double(loadedUntil.load(ordering: .relaxed)) / 1000)
        let timers: [TimerStore.Pending]
        do {
            timers = try await withDeadline(config.leaseDuration) { [store] in try await store.timers(partitions: Array(taken.keys), from: nil, until: until) }
        } catch {
            // Not read: the partitions still held under the same grant wait for the next pass (a
            // newer grant of one is already pending; a lost one is dropped). The other loading
            // steps go on meanwhile.
            let still = owned.withLock { o in taken.filter { o[$0.key] == $0.value } }
            pendingTakeovers.withLock { $0.merge(still) { newer, _ in newer } }
            telemetry.logger.warning("taking over partitions failed; retrying", metadata: ["partitions": "\(still.count)", "error": "\(String(reflecting: error))"])
            return
        }
        let grace = config.grace.milliseconds
        let tooOld = timers.filter { FireRules.isPastGrace(due: $0.due, kind: $0.kind, now: now, grace: grace) }
        let overdue = timers.filter { $0.due <= now }.count
        telemetry.logger.info("took over partitions", metadata: ["partitions": "\(taken.count)", "timers": "\(timers.count)",
                                                               "overdue": "\(overdue)", "pastGrace": "\(tooOld.count)"])
        if !tooOld.isEmpty {
            await fire(tooOld.map { WheelKey(id: $0.id, partition: $0.partition) }, missed: Set(tooOld.map(\.id)))
        }
        let tooOldIDs = Set(tooOld.map(\.id))
        schedule(timers.filter { !tooOldIDs.contains($0.id) })
    }
}

/// A wheel key: the timer id with its partition in the top 16 bits (batches know which
/// leases to check without asking the database).
struct WheelKey: Sendable {
    var raw: UInt64
    init(raw: UInt64) { self.raw = raw }
    init(id: Int64, partition: Int) { raw = UInt64(partition) << 48 | (UInt64(bitPattern: id) & 0xFFFF_FFFF_FFFF) }
    var id: Int64 { Int64(bitPattern: raw & 0xFFFF_FFFF_FFFF) }
    var partition: Int { Int(raw >> 48) }
}

/// Fire lateness over the last minute (HdrHistogram, milliseconds).
struct LatenessWindow {
    var histogram = Histogram<UInt64>(highestTrackableValue: 3_600_000, numberOfSignificantValueDigits: .three)
    var started = ContinuousClock.now
    var previous: (count: Int, p50: Double, p99: Double, max: Double) = (0, 0, 0, 0)

    mutating func rotate() {
        if ContinuousClock.now - started >= .seconds(60) {
            previous = current()
            histogram.reset()
            started = ContinuousClock.now
        }
    }

    mutating func record(_ ms: Int64) {
        rotate()
        histogram.record(UInt64(max(0, ms)))
    }

    func current() -> (count: Int, p50: Double, p99: Double, max: Double) {
        guard histogram.totalCount > 0 else { return (0, 0, 0, 0) }
        return (Int(histogram.totalCount), Double(histogram.valueAtPercentile(50)), Double(histogram.valueAtPercentile(99)), Double(histogram.max))
    }

    /// The current minute, or the last full one when the current is empty.
    mutating func snapshot() -> (count: Int, p50: Double, p99: Double, max: Double) {
        rotate()
        let c = current()
        return c.count > 0 ? c : previous
    }
}
