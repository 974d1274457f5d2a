import CZMQBench
import Foundation
import Histogram
import Messaging
import ZMQ

// Shared by the ordo-one benchmarks and rpc-bench: request/reply through the project's path (envelope + JSON + socket actors + async
// continuations) against raw libzmq DEALER/ROUTER moving the very same bytes, in one run;
// plus round-trip latency at a paced 10 000 requests/s.

public struct Echo: RPCMethod {
    public struct Request: Codable, Sendable {
        var alarmId: String
        var title: String
        var scheduledDate: Date
        var count: Int
    }
    public typealias Response = Request
    public static let type = "bench.echo"
}

public let sampleRequest = Echo.Request(alarmId: "01a2aa2c-6f4e-7f55-9c1b-1f2d3e4f5a6b", title: "Change HVAC Filter",
                                 scheduledDate: Date(timeIntervalSince1970: 1_772_355_600), count: 1)

/// A request envelope as `RPCClient` builds it for `payload` (trace context and deadline headers).
func sampleEnvelope(payload: Data) -> Envelope {
    Envelope(type: Echo.type, source: "bench/1", actor: "user-1",
             headers: ["traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "deadline": "1900000000000"],
             payload: payload)
}

/// The exact frames the envelope path sends (the binary layout), for the raw baseline.
public func sampleFrames() -> (request: [UInt8], reply: [UInt8]) {
    let payload = try! JSONCoding.encode(sampleRequest)
    let request = sampleEnvelope(payload: payload).encoded(as: .binary)
    let reply = Envelope(type: ReplyType.success, source: "bench/2", correlationId: UUIDv7.string(), payload: payload).encoded(as: .binary)
    return ([UInt8](request), [UInt8](reply))
}

/// Raw libzmq: a ROUTER echo thread and a DEALER keeping `window` requests in flight.
public func rawRoundTrips(count: Int, window: Int) -> Duration {
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
/// `curve`: the server and the client each in its own CURVE-secured context (as two services
/// are: server "bench", client "gateway" sending a user actor), else one plain context.
/// `frame`: the envelope's layout on the wire (the services' default is binary).
/// `placement`: where the echo handler runs; it computes nothing, so it is registered as the
/// services register their light handlers (`.socketThread`). `callerSends`: whether the client
/// and server send on the calling task's thread when their socket is idle (the services' default).
public final class EnvelopeRig: Sendable {
    let context: ZMQContext
    let clientContext: ZMQContext
    let server: RPCServer
    let client: RPCClient
    let task: Task<Void, any Error>

    public init(curve: Bool = false, frame: EnvelopeFrame = .binary, placement: HandlerPlacement = .socketThread,
                callerSends: Bool = true) throws {
        if curve {
            let bench = try CurveKeyPair.generate(), gateway = try CurveKeyPair.generate()
            context = try ZMQContext(security: BusSecurity(principal: "bench", keys: bench, publicKeys: ["gateway": gateway.publicKey]))
            clientContext = try ZMQContext(security: BusSecurity(principal: "gateway", keys: gateway, publicKeys: ["bench": bench.publicKey]))
        } else {
            context = ZMQContext()
            clientContext = context
        }
        var router = RPCRouter()
        router.on(Echo.self, placement: placement) { request, _ in request }
        server = try RPCServer(context: context, serviceName: "bench", instance: "s", binds: ["tcp://127.0.0.1:*"],
                               router: router, telemetry: .discarding(), maxConcurrent: 4096, callerSends: callerSends)
        client = try RPCClient(context: clientContext, target: "bench", endpoints: server.endpoints, source: "bench/c",
                               telemetry: .discarding(), defaultTimeout: .seconds(30), frame: frame, callerSends: callerSends)
        let server = self.server
        task = Task { try await server.run() }
    }

    public func roundTrips(count: Int, window: Int) async throws -> Duration {
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

    /// Open-loop load at `rate` requests per second for `seconds`: a pacing thread issues one
    /// request every 1/rate s (clock_nanosleep, not the coarser task timer); each latency runs
    /// from the moment the pacer issued the request to the reply.
    public func pacedLatency(rate: Int, seconds: Int) async throws -> Histogram<UInt64> {
        let total = rate * seconds
        let results = AsyncStream<UInt64>.makeStream(bufferingPolicy: .unbounded)
        let interval = 1_000_000_000 / rate
        let client = self.client
        let pacer = Thread {
            var next = timespec()
            clock_gettime(CLOCK_MONOTONIC, &next)
            for _ in 0..<total {
                next.tv_nsec += interval
                if next.tv_nsec >= 1_000_000_000 {
                    next.tv_nsec -= 1_000_000_000
                    next.tv_sec += 1
                }
                var n = next
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &n, nil) == EINTR {}
                let issued = ContinuousClock.now
                Task {
                    _ = try? await client.call(Echo.self, sampleRequest, actor: "user-1")
                    results.continuation.yield(UInt64(issued.duration(to: .now).nanoseconds / 1000))
                }
            }
        }
        pacer.start()
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        var received = 0
        for await micros in results.stream {
            histogram.record(micros)
            received += 1
            if received == total { break }
        }
        return histogram
    }

    public func close() async {
        await client.close()
        task.cancel()
        await server.close()
        clientContext.terminate()
        context.terminate()
    }
}

/// Operations per second.
public func perSecond(_ count: Int, _ d: Duration) -> Int {
    Int(Double(count) / (Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18))
}

/// The CPU one round trip spends on encoding alone, without sockets or tasks: the request's
/// payload and envelope written and read, the reply's the same, in `frame`. Nanoseconds per
/// round trip over `count` round trips on this thread.
public func codecNanosPerRoundTrip(count: Int, frame: EnvelopeFrame) throws -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    var check = 0
    for _ in 0..<count {
        let payload = try JSONCoding.encode(sampleRequest)
        let request = sampleEnvelope(payload: payload).encoded(as: frame)
        let received = try Envelope.decode(request)
        let echoed = try JSONCoding.decoder().decode(Echo.Request.self, from: received.payload)
        let reply = Envelope(type: ReplyType.success, source: "bench/2", correlationId: received.id,
                             payload: try JSONCoding.encode(echoed)).encoded(as: frame)
        let answer = try Envelope.decode(reply)
        check &+= try JSONCoding.decoder().decode(Echo.Request.self, from: answer.payload).count
    }
    precondition(check == count)
    let d = start.duration(to: clock.now)
    return (Double(d.components.seconds) * 1e9 + Double(d.components.attoseconds) * 1e-9) / Double(count)
}
