import Benchmark
import Foundation
import MessagingBench

// ordo-one registration of the messaging benchmarks (its malloc interposer slows allocating
// code; `rpc-bench` takes the same measurements without it).

let batch = 20_000
let window = 64

let roundTripsPerSecond = BenchmarkMetric.custom("round trips/s", polarity: .prefersLarger, useScalingFactor: false)
let p50 = BenchmarkMetric.custom("p50 µs", polarity: .prefersSmaller, useScalingFactor: false)
let p99 = BenchmarkMetric.custom("p99 µs", polarity: .prefersSmaller, useScalingFactor: false)
let pMax = BenchmarkMetric.custom("max µs", polarity: .prefersSmaller, useScalingFactor: false)


let benchmarks: @Sendable () -> Void = {
    let throughput = Benchmark.Configuration(metrics: [roundTripsPerSecond], warmupIterations: 1, maxDuration: .seconds(20), maxIterations: 7)

    Benchmark("RPC round trips: raw libzmq DEALER/ROUTER, same bytes (window \(window))", configuration: throughput) { benchmark in
        let elapsed = rawRoundTrips(count: batch, window: window)
        benchmark.measurement(roundTripsPerSecond, perSecond(batch, elapsed))
    }

    Benchmark("RPC round trips: envelope + JSON + RPCClient/RPCServer (window \(window))", configuration: throughput) { benchmark in
        let rig = try EnvelopeRig()
        _ = try await rig.roundTrips(count: 2_000, window: window)  // connect and warm up
        let elapsed = try await rig.roundTrips(count: batch, window: window)
        benchmark.measurement(roundTripsPerSecond, perSecond(batch, elapsed))
        await rig.close()
    }

    Benchmark("RPC latency at 10 000 requests/s (envelope path, 3 s)",
              configuration: .init(metrics: [p50, p99, pMax], warmupIterations: 0, maxDuration: .seconds(30), maxIterations: 3)) { benchmark in
        let rig = try EnvelopeRig()
        _ = try await rig.roundTrips(count: 2_000, window: 16)
        let h = try await rig.pacedLatency(rate: 10_000, seconds: 3)
        benchmark.measurement(p50, Int(h.valueAtPercentile(50)))
        benchmark.measurement(p99, Int(h.valueAtPercentile(99)))
        benchmark.measurement(pMax, Int(h.max))
        await rig.close()
    }
}
