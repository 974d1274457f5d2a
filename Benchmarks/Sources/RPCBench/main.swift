// rpc-bench: request/reply throughput through the envelope + JSON path against raw libzmq
// DEALER/ROUTER moving the same bytes, in one run, and round-trip latency at a paced rate.
//   rpc-bench [--requests N] [--window W] [--rate R] [--seconds S] [--runs K]
//   rpc-bench --codec: the encoding work of one round trip alone, per envelope layout, and of one event-sized payload
//   rpc-bench --codec-event encode|decode [--requests N]: one side of the event codec alone, N times (for perf stat)
//   rpc-bench --profile [--requests N] [--window W] [--frame json|binary] [--placement pool|socket] [--caller-sends on|off]:
//     the envelope path alone, once (for perf); --placement: where the echo handler runs (default: the socket thread);
//     --caller-sends: whether requests and replies go out on the calling task's thread when the socket is idle (default on)
import Foundation
import MessagingBench
import Messaging

let args = CommandLine.arguments
func option(_ name: String, _ fallback: Int) -> Int {
    args.firstIndex(of: name).flatMap { $0 + 1 < args.count ? Int(args[$0 + 1]) : nil } ?? fallback
}
let requests = option("--requests", 40_000)
let window = option("--window", 64)
let rate = option("--rate", 10_000)
let seconds = option("--seconds", 5)
let runs = option("--runs", 5)

if args.contains("--codec") {
    for frame in EnvelopeFrame.allCases {
        _ = try codecNanosPerRoundTrip(count: 20_000, frame: frame)
        let runs = (0..<5).map { _ in try! codecNanosPerRoundTrip(count: 100_000, frame: frame) }.sorted()
        print(String(format: "encoding alone (%@ envelope, payload JSON both ways): %.2f µs per round trip (median of 5)",
                     frame.rawValue, runs[2] / 1000))
    }
    _ = try eventCodecNanos(count: 20_000)
    let events = (0..<5).map { _ in try! eventCodecNanos(count: 100_000) }
    let enc = events.map(\.encode).sorted()[2], dec = events.map(\.decode).sorted()[2]
    print(String(format: "an alarm-completed-sized event (%d bytes of JSON): encode %.2f µs, decode %.2f µs (median of 5)",
                 try JSONCoding.encode(sampleMark).count, enc / 1000, dec / 1000))
    exit(0)
}

if let i = args.firstIndex(of: "--codec-event"), i + 1 < args.count {
    // One side of the event codec alone, `--requests` times (for `perf stat`: task-clock, or
    // malloc calls through a uprobe).
    let payload = try JSONCoding.encode(sampleMark)
    var check = 0
    for _ in 0..<requests {
        if args[i + 1] == "decode" {
            check &+= try JSONCoding.decoder().decode(SampleMark.self, from: payload).alarmVersion
        } else {
            check &+= try JSONCoding.encode(sampleMark).count
        }
    }
    print("\(args[i + 1]) of an alarm-completed-sized event, \(requests) times (\(check))")
    exit(0)
}

if args.contains("--profile") {
    let frame = args.firstIndex(of: "--frame").flatMap { $0 + 1 < args.count ? EnvelopeFrame(rawValue: args[$0 + 1]) : nil } ?? .binary
    let pool = args.firstIndex(of: "--placement").map { $0 + 1 < args.count && args[$0 + 1] == "pool" } ?? false
    let callerSends = args.firstIndex(of: "--caller-sends").map { $0 + 1 < args.count && args[$0 + 1] == "on" } ?? true
    let rig = try EnvelopeRig(frame: frame, placement: pool ? .pool : .socketThread, callerSends: callerSends)
    _ = try await rig.roundTrips(count: 2_000, window: window)
    let r = perSecond(requests, try await rig.roundTrips(count: requests, window: window))
    print("envelope (\(frame.rawValue)) + JSON + RPCClient/RPCServer, handler on \(pool ? "the pool" : "the socket thread"), caller sends \(callerSends ? "on" : "off"): \(r) round trips/s, window \(window), \(requests) requests")
    await rig.close()
    exit(0)
}

var raw: [Int] = []
var envelope: [Int] = []
var curve: [Int] = []
for _ in 0..<runs {
    raw.append(perSecond(requests, rawRoundTrips(count: requests, window: window)))
    for secured in [false, true] {
        let rig = try EnvelopeRig(curve: secured)
        _ = try await rig.roundTrips(count: 2_000, window: window)
        let r = perSecond(requests, try await rig.roundTrips(count: requests, window: window))
        if secured { curve.append(r) } else { envelope.append(r) }
        await rig.close()
    }
}
let rawMedian = raw.sorted()[runs / 2]
let envMedian = envelope.sorted()[runs / 2]
let curveMedian = curve.sorted()[runs / 2]
print("round trips/s, window \(window), \(requests) per run, median of \(runs):")
print("  raw libzmq DEALER/ROUTER, same bytes : \(rawMedian)   runs \(raw)")
print("  envelope + JSON + RPCClient/RPCServer: \(envMedian)   runs \(envelope)")
print(String(format: "  envelope / raw                       : %.1f %%", Double(envMedian) / Double(rawMedian) * 100))
print("  the same over CurveZMQ (ZAP, User-Id): \(curveMedian)   runs \(curve)")
print(String(format: "  CURVE on / off                       : %.1f %%", Double(curveMedian) / Double(envMedian) * 100))
let rig = try EnvelopeRig()
_ = try await rig.roundTrips(count: 2_000, window: 16)
let h = try await rig.pacedLatency(rate: rate, seconds: seconds)
print("latency at \(rate) requests/s for \(seconds) s (\(h.totalCount) requests): p50 \(h.valueAtPercentile(50)) µs, p90 \(h.valueAtPercentile(90)) µs, p99 \(h.valueAtPercentile(99)) µs, max \(h.max) µs")
await rig.close()
exit(0)
