import Benchmark
import CZMQBench
import Foundation
import Histogram
import Messaging
import ZMQ

// Request/reply through the project's path (envelope + JSON + socket actors + async
// continuations) against raw libzmq DEALER/ROUTER moving the very same bytes, in one run;
// plus round-trip latency at a paced 10 000 requests/s.

struct Echo: RPCMethod {
    struct Request: Codable, Sendable {
        var alarmId: String
        var title: String
        var scheduledDate: Date
        var count: Int
    }
    typealias Response = Request
    static let type = "bench.echo"
}

let batch = 20_000
let window = 64

let sampleRequest = Echo.Request(alarmId: "01a2aa2c-6f4e-7f55-9c1b-1f2d3e4f5a6b", title: "Change HVAC Filter",
                                 scheduledDate: Date(timeIntervalSince1970: 1_772_355_600), count: 1)

/// The exact frames the envelope path sends, for the raw baseline.
func sampleFrames() -> (request: [UInt8], reply: [UInt8]) {
    let payload = try! JSONCoding.encode(sampleRequest)
    let request = Envelope(type: Echo.type, source: "bench/1", actor: "user-1",
                           headers: ["traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "deadline": "1900000000000"],
                           payload: payload).encoded()
    let reply = Envelope(type: ReplyType.success, source: "bench/2", correlationId: UUIDv7.string(), payload: payload).encoded()
    return ([UInt8](request), [UInt8](reply))
}

/// Raw libzmq: a ROUTER echo thread and a DEALER keeping `window` requests in flight.
func rawRoundTrips(count: Int, window: Int) -> Duration {
    let (request, reply) = sampleFrames()
    let ctx = zmq_ctx_new()!
    let router = zmq_socket(ctx, ZMQ_ROUTER)!
    var hwm: Int32 = 100_000
    zmq_setsockopt(router, ZMQ_RCVHWM, &hwm, 4)
    zmq_setsockopt(router, ZMQ_SNDHWM, &hwm, 4)
    zmq_bind(router, "tcp://127.0.0.1:*")
    var endpoint = [CChar](repeating: 0, count: 256)
    var size = endpoint.count
    zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, &endpoint, &size)
    let dealer = zmq_socket(ctx, ZMQ_DEALER)!
    zmq_setsockopt(dealer, ZMQ_RCVHWM, &hwm, 4)
    zmq_setsockopt(dealer, ZMQ_SNDHWM, &hwm, 4)
    zmq_connect(dealer, endpoint)
    nonisolated(unsafe) let routerSocket = router
    let server = Thread {
        var id = zmq_msg_t()
        var body = zmq_msg_t()
        for _ in 0..<count {
            zmq_msg_init(&id)
            zmq_msg_init(&body)
            zmq_msg_recv(&id, routerSocket, 0)
            zmq_msg_recv(&body, routerSocket, 0)
            zmq_msg_send(&id, routerSocket, ZMQ_SNDMORE)
            reply.withUnsafeBytes { _ = zmq_send(routerSocket, $0.baseAddress, $0.count, 0) }
            zmq_msg_close(&body)
        }
    }
    server.start()
    let clock = ContinuousClock()
    let start = clock.now
    var sent = 0
    for _ in 0..<min(window, count) {
        request.withUnsafeBytes { _ = zmq_send(dealer, $0.baseAddress, $0.count, 0) }
        sent += 1
    }
    var message = zmq_msg_t()
    for _ in 0..<count {
        zmq_msg_init(&message)
        zmq_msg_recv(&message, dealer, 0)
        zmq_msg_close(&message)
        if sent < count {
            request.withUnsafeBytes { _ = zmq_send(dealer, $0.baseAddress, $0.count, 0) }
            sent += 1
        }
    }
    let elapsed = start.duration(to: clock.now)
    var linger: Int32 = 0
    zmq_setsockopt(dealer, ZMQ_LINGER, &linger, 4)
    zmq_setsockopt(router, ZMQ_LINGER, &linger, 4)
    while !server.isFinished { usleep(100) }
    zmq_close(dealer)
    zmq_close(router)
    zmq_ctx_term(ctx)
    return elapsed
}

/// The project's path: RPCServer with a typed handler, RPCClient, `window` concurrent callers.
final class EnvelopeRig: Sendable {
    let context = ZMQContext()
    let server: RPCServer
    let client: RPCClient
    let task: Task<Void, any Error>

    init() throws {
        var router = RPCRouter()
        router.on(Echo.self) { request, _ in request }
        server = try RPCServer(context: context, serviceName: "bench", instance: "s", binds: ["tcp://127.0.0.1:*"],
                               router: router, telemetry: .discarding(), maxConcurrent: 4096)
        client = try RPCClient(context: context, target: "bench", endpoints: server.endpoints, source: "bench/c",
                               telemetry: .discarding(), defaultTimeout: .seconds(30))
        let server = self.server
        task = Task { try await server.run() }
    }

    func roundTrips(count: Int, window: Int) async throws -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<window {
                group.addTask {
                    var k = w
                    while k < count {
                        _ = try await self.client.call(Echo.self, sampleRequest, actor: "user-1")
                        k += window
                    }
                }
            }
            try await group.waitForAll()
        }
        return start.duration(to: clock.now)
    }

    /// Open-loop load at `rate` requests per second for `seconds`, sent in 1 ms batches (the
    /// timer granularity); latency of each round trip from the moment its batch was due.
    func pacedLatency(rate: Int, seconds: Int) async throws -> Histogram<UInt64> {
        let perBatch = rate / 1000
        let batches = seconds * 1000
        let clock = ContinuousClock()
        let start = clock.now + .milliseconds(20)
        return try await withThrowingTaskGroup(of: UInt64.self) { group in
            for b in 0..<batches {
                let due = start + .milliseconds(b)
                if clock.now < due { try await clock.sleep(until: due, tolerance: .microseconds(100)) }
                for _ in 0..<perBatch {
                    group.addTask {
                        _ = try await self.client.call(Echo.self, sampleRequest, actor: "user-1")
                        return UInt64(max(0, due.duration(to: clock.now).nanoseconds / 1000))
                    }
                }
            }
            var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
            for try await micros in group { histogram.record(micros) }
            return histogram
        }
    }

    func close() async {
        await client.close()
        task.cancel()
        await server.close()
        context.terminate()
    }
}

let roundTripsPerSecond = BenchmarkMetric.custom("round trips/s", polarity: .prefersLarger, useScalingFactor: false)
let p50 = BenchmarkMetric.custom("p50 µs", polarity: .prefersSmaller, useScalingFactor: false)
let p99 = BenchmarkMetric.custom("p99 µs", polarity: .prefersSmaller, useScalingFactor: false)
let pMax = BenchmarkMetric.custom("max µs", polarity: .prefersSmaller, useScalingFactor: false)

func perSecond(_ count: Int, _ d: Duration) -> Int {
    Int(Double(count) / (Double(d.nanoseconds) / 1e9))
}

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
