import Benchmark
import Foundation
import HeapModule
import TimingWheel

// The scheduler's timing wheel against a binary heap with lazy deletion (swift-collections
// Heap plus a key → deadline table), side by side with 1 M and 10 M pending timers spread
// over an hour: schedule+cancel pairs, advancing through a minute of due timers, and bytes per
// pending timer.

/// The baseline: a min-heap of (deadline, key); cancel removes the key from the table and the
/// stale heap entry is skipped when it surfaces.
struct HeapTimers {
    struct Item: Comparable {
        var deadline: Int64
        var key: UInt64
        static func < (a: Item, b: Item) -> Bool { a.deadline < b.deadline }
    }

    var heap = Heap<Item>()
    var live: [UInt64: Int64] = [:]

    mutating func schedule(_ key: UInt64, _ deadline: Int64) {
        live[key] = deadline
        heap.insert(Item(deadline: deadline, key: key))
    }

    mutating func cancel(_ key: UInt64) { live[key] = nil }

    mutating func advance(to t: Int64, into out: inout [UInt64]) {
        while let top = heap.min, top.deadline <= t {
            heap.removeMin()
            if live[top.key] == top.deadline {
                live[top.key] = nil
                out.append(top.key)
            }
        }
    }

    var bytes: Int { heap.count * MemoryLayout<Item>.stride + live.capacity * (MemoryLayout<UInt64>.stride + MemoryLayout<Int64>.stride + 1) }
}

let opsPerSecond = BenchmarkMetric.custom("ops/s", polarity: .prefersLarger, useScalingFactor: false)
let bytesPerTimer = BenchmarkMetric.custom("bytes/timer", polarity: .prefersSmaller, useScalingFactor: false)
let duePerSecond = BenchmarkMetric.custom("due timers/s", polarity: .prefersLarger, useScalingFactor: false)

let hour: Int64 = 3_600_000
let start: Int64 = 1_800_000_000_000

struct Workload {
    var rng = SystemRandomNumberGenerator()
    func deadline(_ r: inout SystemRandomNumberGenerator) -> Int64 { start + Int64.random(in: 0..<hour, using: &r) }
}

func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18 }

func wheel(pending: Int) -> TimingWheel {
    var w = TimingWheel(now: start, tick: 10)
    w.reserveCapacity(pending + 1_000)
    var r = SystemRandomNumberGenerator()
    for k in 0..<pending { w.schedule(key: UInt64(k), at: start + Int64.random(in: 1..<hour, using: &r)) }
    return w
}

func heapTimers(pending: Int) -> HeapTimers {
    var h = HeapTimers()
    h.live.reserveCapacity(pending + 1_000)
    var r = SystemRandomNumberGenerator()
    for k in 0..<pending { h.schedule(UInt64(k), start + Int64.random(in: 1..<hour, using: &r)) }
    return h
}

let operations = 2_000_000

let benchmarks: @Sendable () -> Void = {
    let config = Benchmark.Configuration(metrics: [opsPerSecond, bytesPerTimer], warmupIterations: 0, maxDuration: .seconds(120), maxIterations: 3)
    for pending in [1_000_000, 10_000_000] {
        let label = pending == 1_000_000 ? "1M" : "10M"
        Benchmark("wheel schedule+cancel, \(label) pending", configuration: config) { benchmark in
            var w = wheel(pending: pending)
            var r = SystemRandomNumberGenerator()
            let deadlines = (0..<operations).map { _ in start + Int64.random(in: 1..<hour, using: &r) }
            let clock = ContinuousClock()
            let t0 = clock.now
            for k in 0..<operations {
                let key = UInt64(pending + k)
                w.schedule(key: key, at: deadlines[k])
                w.cancel(key: key)
            }
            let elapsed = t0.duration(to: clock.now)
            benchmark.measurement(opsPerSecond, Int(Double(2 * operations) / seconds(elapsed)))
            benchmark.measurement(bytesPerTimer, Int(w.bytesPerTimer.rounded()))
            blackHole(w.count)
        }
        Benchmark("heap schedule+cancel, \(label) pending", configuration: config) { benchmark in
            var h = heapTimers(pending: pending)
            var r = SystemRandomNumberGenerator()
            let deadlines = (0..<operations).map { _ in start + Int64.random(in: 1..<hour, using: &r) }
            let clock = ContinuousClock()
            let t0 = clock.now
            for k in 0..<operations {
                let key = UInt64(pending + k)
                h.schedule(key, deadlines[k])
                h.cancel(key)
            }
            let elapsed = t0.duration(to: clock.now)
            benchmark.measurement(opsPerSecond, Int(Double(2 * operations) / seconds(elapsed)))
            benchmark.measurement(bytesPerTimer, h.bytes / max(1, h.live.count))
            blackHole(h.heap.count)
        }
        let advanceConfig = Benchmark.Configuration(metrics: [duePerSecond], warmupIterations: 0, maxDuration: .seconds(120), maxIterations: 3)
        Benchmark("wheel advance through 6 minutes, \(label) pending", configuration: advanceConfig) { benchmark in
            var w = wheel(pending: pending)
            var out: [TimingWheel.Entry] = []
            out.reserveCapacity(pending / 5)
            let clock = ContinuousClock()
            let t0 = clock.now
            var t = start
            while t < start + hour / 10 {
                t += 10
                w.advance(to: t, into: &out)
            }
            let elapsed = t0.duration(to: clock.now)
            benchmark.measurement(duePerSecond, Int(Double(out.count) / seconds(elapsed)))
        }
        Benchmark("heap advance through 6 minutes, \(label) pending", configuration: advanceConfig) { benchmark in
            var h = heapTimers(pending: pending)
            var out: [UInt64] = []
            out.reserveCapacity(pending / 5)
            let clock = ContinuousClock()
            let t0 = clock.now
            var t = start
            while t < start + hour / 10 {
                t += 10
                h.advance(to: t, into: &out)
            }
            let elapsed = t0.duration(to: clock.now)
            benchmark.measurement(duePerSecond, Int(Double(out.count) / seconds(elapsed)))
        }
    }
}
