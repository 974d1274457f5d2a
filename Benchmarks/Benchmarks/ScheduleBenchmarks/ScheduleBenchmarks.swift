import Benchmark
import Foundation
import Schedules

// Next-occurrence computations per second on one core, for a realistic mix of schedules
// (mostly monthly and weekly, some annual, relative, custom and one-off, across zones with
// and without daylight saving), each asked for its next occurrence after a random instant.

struct Mix {
    var rng = SystemRandomNumberGenerator()
    let zones = ["UTC", "America/New_York", "Europe/London", "Asia/Manila", "Australia/Sydney", "America/Los_Angeles",
                 "Europe/Berlin", "Asia/Kolkata", "America/St_Johns", "Pacific/Auckland"]

    mutating func schedule() -> Schedule {
        let roll = Int.random(in: 0..<100, using: &rng)
        let zone = zones.randomElement(using: &rng)!
        let time = String(format: "%02d:%02d", Int.random(in: 6...21, using: &rng), [0, 15, 30, 45].randomElement(using: &rng)!)
        var s = Schedule(type: "monthly", timeOfDay: time, timezone: zone,
                         startDate: Date(timeIntervalSince1970: Double(Int.random(in: 1_700_000_000...1_790_000_000, using: &rng))))
        switch roll {
        case 0..<40:
            s.dayOfMonth = Int.random(in: 0...31, using: &rng)
            s.interval = [1, 1, 1, 3, 6].randomElement(using: &rng)
        case 40..<60:
            s.type = "weekly"
            s.daysOfWeek = [Int.random(in: 1...7, using: &rng)]
            s.interval = [1, 1, 2].randomElement(using: &rng)
        case 60..<75:
            s.type = "annual"
            s.month = Int.random(in: 1...12, using: &rng)
            s.dayOfMonthAnnual = Int.random(in: 1...28, using: &rng)
        case 75..<85:
            s.monthlyType = "relative"
            s.relativeWeek = Int.random(in: 1...5, using: &rng)
            s.relativeDayOfWeek = Int.random(in: 1...7, using: &rng)
        case 85..<95:
            s.type = "custom"
            s.intervalDays = [7, 14, 30, 90, 180].randomElement(using: &rng)
        default:
            s.type = "once"
        }
        return s
    }
}

let nextPerSecond = BenchmarkMetric.custom("next/s", polarity: .prefersLarger, useScalingFactor: false)

let benchmarks: @Sendable () -> Void = {
    Benchmark("Schedule.next(after:) — realistic mix, one core",
              configuration: .init(metrics: [nextPerSecond, .wallClock, .mallocCountTotal], warmupIterations: 1, maxDuration: .seconds(10), maxIterations: 10)) { benchmark in
        var mix = Mix()
        let compiled = (0..<10_000).map { _ in try! mix.schedule().compile() }
        var rng = SystemRandomNumberGenerator()
        let afters = (0..<10_000).map { _ in Date(timeIntervalSince1970: Double(Int.random(in: 1_750_000_000...1_800_000_000, using: &rng))) }
        let rounds = 20
        benchmark.startMeasurement()
        let clock = ContinuousClock()
        let start = clock.now
        var found = 0
        for _ in 0..<rounds {
            for k in 0..<compiled.count where compiled[k].next(after: afters[k]) != nil { found += 1 }
        }
        let elapsed = start.duration(to: clock.now)
        benchmark.stopMeasurement()
        blackHole(found)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        benchmark.measurement(nextPerSecond, Int(Double(rounds * compiled.count) / seconds))
    }

    Benchmark("Schedule.compile — validation and zone lookup",
              configuration: .init(metrics: [.throughput, .wallClock], warmupIterations: 1, scalingFactor: .kilo, maxDuration: .seconds(5))) { benchmark in
        var mix = Mix()
        let schedules = (0..<1_000).map { _ in mix.schedule() }
        benchmark.startMeasurement()
        for k in benchmark.scaledIterations { blackHole(try? schedules[k % 1_000].compile()) }
    }
}
