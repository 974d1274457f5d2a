import Foundation
import Messaging
import ServiceLifecycle
import Support
import Synchronization
import Testing
import ZMQ

struct Echo: RPCMethod {
    struct Request: Codable, Sendable { var text: String; var delayMs: Int = 0 }
    struct Response: Codable, Sendable { var text: String; var actor: String? }
    static let type = "test.echo"
    static let access = MethodAccess.services
}

struct Fail: RPCMethod {
    typealias Request = Empty
    typealias Response = Empty
    static let type = "test.fail"
}

struct Count: RPCMethod {
    typealias Request = Empty
    struct Response: Codable, Sendable { var n: Int }
    static let type = "test.count"
    static let access = MethodAccess.services
}

/// Counts its executions when it starts, then takes `delayMs`.
struct SlowCount: RPCMethod {
    struct Request: Codable, Sendable { var delayMs: Int }
    struct Response: Codable, Sendable { var n: Int }
    static let type = "test.slow-count"
    static let access = MethodAccess.services
}

final class AtomicCounter: Sendable { let value = Atomic<Int>(0) }

/// A running RPC server on an ephemeral port plus a client connected to it.
final class RPCFixture: Sendable {
    let context = ZMQContext()
    let server: RPCServer
    let client: RPCClient
    let counter = AtomicCounter()
    /// Executions of ``SlowCount`` started.
    let slowRuns = AtomicCounter()
    let task: Task<Void, any Error>

    init(maxFrameBytes: Int = 1 << 20, maxConcurrent: Int = 1024, maxPerActor: Int = 0) throws {
        var router = RPCRouter()
        let counter = self.counter
        let slowRuns = self.slowRuns
        router.on(SlowCount.self) { request, _ in
            let n = slowRuns.value.add(1, ordering: .relaxed).newValue
            try await Task.sleep(for: .milliseconds(request.delayMs))
            return SlowCount.Response(n: n)
        }
        router.on(Echo.self) { request, context in
            if request.delayMs > 0 { try await Task.sleep(for: .milliseconds(request.delayMs)) }
            // With an attachment the reply says how many bytes came with it.
            return Echo.Response(text: context.attachment.map { "\(request.text)+\($0.count)" } ?? request.text, actor: context.actor)
        }
        router.on(Fail.self) { _, _ in throw ServiceError(.scheduleInvalid, "schedule.dayOfMonth must be 0...31") }
        router.on(Count.self) { _, _ in Count.Response(n: counter.value.add(1, ordering: .relaxed).newValue) }
        server = try RPCServer(context: context, serviceName: "test", instance: "t1", binds: ["tcp://127.0.0.1:*"],
                               router: router, telemetry: .discarding(), maxFrameBytes: maxFrameBytes,
                               maxConcurrent: maxConcurrent, maxPerActor: maxPerActor)
        client = try RPCClient(context: context, target: "test", endpoints: server.endpoints, source: "tests/1",
                               telemetry: .discarding(), defaultTimeout: .seconds(30), maxFrameBytes: maxFrameBytes)
        let server = self.server
        task = Task { try await server.run() }
    }

    func shutdown() async {
        await client.close()
        task.cancel()
        await server.close()
        context.terminate()
    }
}

@Suite("RPC over DEALER/ROUTER")
struct RPCTests {
    @Test("a request gets its reply, with the actor carried")
    func roundTrip() async throws {
        let f = try RPCFixture()
        let reply = try await f.client.call(Echo.self, .init(text: "hello"), actor: "user-1")
        #expect(reply.text == "hello")
        #expect(reply.actor == "user-1")
        await f.shutdown()
    }

    @Test("a typed error travels back as {code, message}")
    func typedError() async throws {
        let f = try RPCFixture()
        await #expect(throws: ServiceError(.scheduleInvalid, "schedule.dayOfMonth must be 0...31")) {
            _ = try await f.client.call(Fail.self, Empty())
        }
        await f.shutdown()
    }

    @Test("a missed deadline fails the call with CA021 and the late reply is ignored")
    func deadline() async throws {
        let f = try RPCFixture()
        let started = ContinuousClock.now
        do {
            _ = try await f.client.call(Echo.self, .init(text: "slow", delayMs: 400), timeout: .milliseconds(100))
            Issue.record("expected a deadline error")
        } catch let e as ServiceError {
            #expect(e.code == .deadlineExceeded)
        }
        #expect(started.duration(to: .now) < .seconds(3))  // the deadline, not the 400 ms handler (generous for loaded CI machines)
        #expect(f.client.inFlight == 0)
        // The client still works afterwards.
        let ok = try await f.client.call(Echo.self, .init(text: "after"))
        #expect(ok.text == "after")
        await f.shutdown()
    }

    @Test("a client idle past its last deadline sweep still fails a slow call with CA021")
    func deadlineAfterIdle() async throws {
        let f = try RPCFixture()
        // The deadline sweep stops once nothing waits; a request the caller sends on its own
        // thread (the socket thread asleep) must start it again.
        _ = try await f.client.call(Echo.self, .init(text: "first"))
        try await Task.sleep(for: .milliseconds(50))
        let started = ContinuousClock.now
        do {
            let late = try await f.client.call(Echo.self, .init(text: "slow", delayMs: 1_500), timeout: .milliseconds(100))
            Issue.record("expected a deadline error, got the late reply \(late.text)")
        } catch let e as ServiceError {
            #expect(e.code == .deadlineExceeded)
        }
        #expect(started.duration(to: .now) < .milliseconds(1_200))
        #expect(f.client.inFlight == 0)
        await f.shutdown()
    }

    @Test("1 000 concurrent requests all get their own reply")
    func concurrent() async throws {
        let f = try RPCFixture()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<1_000 {
                group.addTask {
                    let reply = try await f.client.call(Echo.self, .init(text: "m\(i)", delayMs: i % 7))
                    #expect(reply.text == "m\(i)")
                }
            }
            try await group.waitForAll()
        }
        #expect(f.client.inFlight == 0)
        await f.shutdown()
    }

    @Test("an idempotent request retried after a missed deadline runs once")
    func idempotentRetry() async throws {
        let f = try RPCFixture()
        // First attempt misses its deadline; the retry gets the cached first answer.
        let reply = try await f.client.call(Echo.self, .init(text: "x", delayMs: 150), timeout: .milliseconds(100),
                                            idempotencyKey: "k1", retries: 2)
        #expect(reply.text == "x")
        let a = try await f.client.call(Count.self, Empty(), idempotencyKey: "same")
        let b = try await f.client.call(Count.self, Empty(), idempotencyKey: "same")
        #expect(a.n == b.n)
        let c = try await f.client.call(Count.self, Empty())
        #expect(c.n == a.n + 1)
        await f.shutdown()
    }

    @Test("a keyed request retried while its first attempt still runs is executed once; both attempts get its answer")
    func retryWhileRunning() async throws {
        let f = try RPCFixture()
        // The handler takes 600 ms; each attempt waits 250 ms, so one attempt alone cannot get
        // the answer: the reply proves a retry reached the server while the first still ran.
        let reply = try await f.client.call(SlowCount.self, .init(delayMs: 600), timeout: .milliseconds(250),
                                            idempotencyKey: "slow-1", retries: 6)
        #expect(reply.n == 1)
        #expect(f.slowRuns.value.load(ordering: .relaxed) == 1, "the handler ran \(f.slowRuns.value.load(ordering: .relaxed)) times")
        // A new key runs again.
        #expect(try await f.client.call(SlowCount.self, .init(delayMs: 0), idempotencyKey: "slow-2").n == 2)
        await f.shutdown()
    }

    @Test("a request still queued when its deadline passes is dropped by the server and never executed")
    func expiredRequestDropped() async throws {
        // One request at a time: the second waits in libzmq's queue behind the first.
        let f = try RPCFixture(maxConcurrent: 1)
        async let busy = f.client.call(SlowCount.self, .init(delayMs: 800), timeout: .seconds(10))
        #expect(await eventually(timeout: .seconds(5), every: .milliseconds(10)) { f.slowRuns.value.load(ordering: .relaxed) == 1 })
        await #expect(throws: ServiceError.self) {
            _ = try await f.client.call(SlowCount.self, .init(delayMs: 0), timeout: .milliseconds(150))
        }
        #expect(try await busy.n == 1)
        // The server is free again: a third request runs. The queued one, past its deadline,
        // was dropped (had it run, this would be the third execution).
        #expect(try await f.client.call(SlowCount.self, .init(delayMs: 0), timeout: .seconds(10)).n == 2)
        #expect(f.slowRuns.value.load(ordering: .relaxed) == 2)
        await f.shutdown()
    }

    @Test("a client of several replicas keeps getting answers after one goes away")
    func replicaGone() async throws {
        let context = ZMQContext()
        func replica(_ name: String) throws -> RPCServer {
            var router = RPCRouter()
            router.on(Echo.self) { request, _ in Echo.Response(text: name, actor: nil) }
            return try RPCServer(context: context, serviceName: "test", instance: name, binds: ["tcp://127.0.0.1:*"],
                                 router: router, telemetry: .discarding())
        }
        let a = try replica("a"), b = try replica("b")
        let tasks = [a, b].map { server in Task { try await server.run() } }
        let client = try RPCClient(context: context, target: "test", endpoints: a.endpoints + b.endpoints, source: "tests/1",
                                   telemetry: .discarding(), defaultTimeout: .seconds(1))
        var answered = Set<String>()
        for _ in 0..<20 { answered.insert(try await client.call(Echo.self, .init(text: "")).text) }
        #expect(answered == ["a", "b"], "requests are spread over both replicas")
        // Replica a goes away (its connections close, as when its process is killed).
        tasks[0].cancel()
        await a.close()
        try await Task.sleep(for: .milliseconds(300))
        // Every request now reaches b within its deadline; none waits for a to come back.
        var failed = 0
        for _ in 0..<20 {
            do {
                #expect(try await client.call(Echo.self, .init(text: "")).text == "b")
            } catch { failed += 1 }
        }
        #expect(failed == 0)
        await client.close()
        tasks[1].cancel()
        await b.close()
        context.terminate()
    }
}
