import Foundation
import Histogram
import Synchronization

/// Latency distributions in microseconds (HdrHistogram, 3 significant digits, up to 1 h).
struct LatencyStats: Sendable {
    private(set) var histogram = Histogram<UInt64>(highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)

    mutating func record(seconds: Double) {
        histogram.record(UInt64(max(0, min(seconds, 3600)) * 1_000_000))
    }

    var count: Int { Int(histogram.totalCount) }

    /// Milliseconds at `percentile` (0 when empty).
    func ms(_ percentile: Double) -> Double {
        count == 0 ? 0 : Double(histogram.valueAtPercentile(percentile)) / 1000
    }

    var maxMs: Double { count == 0 ? 0 : Double(histogram.max) / 1000 }

    /// The summary printed and written as JSON.
    var summary: LoadReport.Distribution {
        LoadReport.Distribution(count: count, p50: ms(50), p90: ms(90), p99: ms(99), p999: ms(99.9), max: maxMs)
    }
}

/// Everything a load run measures, shared by the HTTP callers and the live-stream listeners.
final class LoadRecorder: Sendable {
    struct HTTPCounts: Sendable {
        var latency = LatencyStats()
        var statuses: [Int: Int] = [:]
        var transportErrors = 0
        /// Transport errors after which the request was sent again (it is safe to repeat).
        var transportRetries = 0
        var rateLimited = 0
        /// Set-up requests answered 503/504 (or not at all) and sent again after a backoff.
        var refused = 0
    }

    struct State: Sendable {
        var http: [String: HTTPCounts] = [:]
        var fireLateness = LatencyStats()
        var fanOut = LatencyStats()
        var lateByMinute: [Date: LatencyStats] = [:]
        var sampledTraces: [LoadReport.SampledTrace] = []
        var transportErrorKinds: Set<String> = []
    }

    let state = Mutex(State())

    /// One HTTP exchange: `status` nil for a transport error (described by `error`).
    func http(_ operation: String, status: Int?, seconds: Double, error: String? = nil) {
        state.withLock { s in
            if let error, s.transportErrorKinds.count < 5 { s.transportErrorKinds.insert(String(error.prefix(200))) }
            var c = s.http[operation] ?? HTTPCounts()
            c.latency.record(seconds: seconds)
            if let status { c.statuses[status, default: 0] += 1 } else { c.transportErrors += 1 }
            s.http[operation] = c
        }
    }

    /// A request sent again after a transport error.
    func transportRetried(_ operation: String) {
        state.withLock { s in s.http[operation, default: HTTPCounts()].transportRetries += 1 }
    }

    /// A set-up request refused (503, 504, a transport error) and sent again after a backoff.
    func refused(_ operation: String) {
        state.withLock { s in s.http[operation, default: HTTPCounts()].refused += 1 }
    }

    /// Set-up requests of `operation` sent again after a refusal so far.
    func refusedCount(_ operation: String) -> Int {
        state.withLock { $0.http[operation]?.refused ?? 0 }
    }

    /// A 429 answered and retried later.
    func rateLimited(_ operation: String) {
        state.withLock { s in s.http[operation, default: HTTPCounts()].rateLimited += 1 }
    }

    func fire(lateness: Double, due: Date) {
        state.withLock { s in
            s.fireLateness.record(seconds: lateness)
            s.lateByMinute[due, default: LatencyStats()].record(seconds: lateness)
        }
    }

    func fanOut(_ seconds: Double) {
        state.withLock { $0.fanOut.record(seconds: seconds) }
    }

    func sampled(_ trace: LoadReport.SampledTrace) {
        state.withLock { $0.sampledTraces.append(trace) }
    }

    /// Requests answered with 5xx so far, and transport errors.
    var failures: (serverErrors: Int, transport: Int) {
        state.withLock { s in
            s.http.values.reduce((0, 0)) { acc, c in
                (acc.0 + c.statuses.filter { $0.key >= 500 }.values.reduce(0, +), acc.1 + c.transportErrors)
            }
        }
    }
}
