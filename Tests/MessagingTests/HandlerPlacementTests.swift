import Foundation
import Messaging
import Synchronization
import Testing
import ZMQ

/// What a handler reports about where it ran.
struct Where: RPCMethod {
    struct Request: Codable, Sendable { var sleepMs: Int = 0 }
    struct Response: Codable, Sendable { var before: String; var after: String }
    static let type = "test.where"
}

/// The server a handler asks where it runs (set once the server exists).
private final class ServerRef: Sendable {
    private let server = Mutex<RPCServer?>(nil)
    func set(_ s: RPCServer) { server.withLock { $0 = s } }
    /// "socket" on the server's socket thread, else "elsewhere".
    var here: String { server.withLock { $0?.isOnSocketThread == true } ? "socket" : "elsewhere" }
}

/// The most handlers seen waiting at once.
private final class Overlap: Sendable {
    private let state = Mutex((now: 0, most: 0))
    func enter() { state.withLock { $0.now += 1; $0.most = max($0.most, $0.now) } }
    func leave() { state.withLock { $0.now -= 1 } }
    var most: Int { state.withLock { $0.most } }
}

/// A gate a handler waits at until the test opens it.
private final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))
    func wait() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let go = state.withLock { s -> Bool in
                if s.open { return true }
                s.waiter = c
                return false
            }
            if go { c.resume() }
        }
    }
    var waiting: Bool { state.withLock { $0.waiter != nil } }
    func open() {
        let c = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.open = true
            defer { s.waiter = nil }
            return s.waiter
        }
        c?.resume()
    }
}

@Suite("Handler placement: the socket thread as a task executor")
struct HandlerPlacementTests {
    private func serve(_ placement: HandlerPlacement, context: ZMQContext,
                       _ handler: @escaping @Sendable (Where.Request, ServerRef) async throws -> Where.Response) throws
        -> (RPCServer, RPCClient, Task<Void, any Error>) {
        var router = RPCRouter()
        let ref = ServerRef()
        router.on(Where.self, placement: placement) { request, _ in try await handler(request, ref) }
        let server = try RPCServer(context: context, serviceName: "placed", instance: "p1", binds: ["tcp://127.0.0.1:*"],
                                   router: router, telemetry: .discarding())
        ref.set(server)
        let client = try RPCClient(context: context, target: "placed", endpoints: server.endpoints, source: "tests/1",
                                   telemetry: .discarding(), defaultTimeout: .seconds(30))
        return (server, client, Task { try await server.run() })
    }

    @Test("a socket-thread handler runs on the socket's thread, before and after it suspends; a pool handler never does")
    func whereHandlersRun() async throws {
        let context = ZMQContext()
        let work: @Sendable (Where.Request, ServerRef) async throws -> Where.Response = { request, ref in
            let before = ref.here
            try await Task.sleep(for: .milliseconds(request.sleepMs))
            return Where.Response(before: before, after: ref.here)
        }
        let (onSocket, socketClient, t1) = try serve(.socketThread, context: context, work)
        let (onPool, poolClient, t2) = try serve(.pool, context: context, work)
        for sleep in [0, 5] {
            let s = try await socketClient.call(Where.self, .init(sleepMs: sleep))
            #expect(s.before == "socket")
            #expect(s.after == "socket")
            let p = try await poolClient.call(Where.self, .init(sleepMs: sleep))
            #expect(p.before == "elsewhere")
            #expect(p.after == "elsewhere")
        }
        await socketClient.close(); await poolClient.close()
        t1.cancel(); t2.cancel()
        await onSocket.close(); await onPool.close()
        context.terminate()
    }

    @Test("socket-thread handlers that wait interleave on the one thread, and each gets its own reply")
    func waitingHandlersInterleave() async throws {
        let context = ZMQContext()
        let overlap = Overlap()
        let (server, client, task) = try serve(.socketThread, context: context) { request, ref in
            overlap.enter()
            try await Task.sleep(for: .milliseconds(request.sleepMs))
            overlap.leave()
            return Where.Response(before: "\(request.sleepMs)", after: ref.here)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                group.addTask {
                    let reply = try await client.call(Where.self, .init(sleepMs: 10 + i % 13))
                    #expect(reply.before == "\(10 + i % 13)")
                    #expect(reply.after == "socket")
                }
            }
            try await group.waitForAll()
        }
        // Every one resumed on the socket thread, and while one slept the thread took the next
        // request: they waited together on one thread.
        #expect(overlap.most > 1)
        await client.close()
        task.cancel()
        await server.close()
        context.terminate()
    }

    @Test("a handler still waiting when its socket closes resumes elsewhere: no job is dropped")
    func jobsOutliveTheSocket() async throws {
        let context = ZMQContext()
        let gate = Gate()
        let finished = Mutex<String?>(nil)
        let (server, client, task) = try serve(.socketThread, context: context) { _, ref in
            await gate.wait()
            let after = ref.here
            finished.withLock { $0 = after }
            return Where.Response(before: "", after: after)
        }
        let call = Task { try? await client.call(Where.self, .init(), timeout: .seconds(2)) }
        while !gate.waiting { try await Task.sleep(for: .milliseconds(5)) }
        task.cancel()
        await server.close()          // the socket thread has stopped; the handler still waits
        gate.open()                   // its resumption is a job for a thread that is gone
        // It runs anyway, on the global executor (a dropped job would leave it waiting forever).
        let waitUntil = ContinuousClock.now + .seconds(10)
        while finished.withLock({ $0 }) == nil, ContinuousClock.now < waitUntil { try await Task.sleep(for: .milliseconds(10)) }
        let ranOn = finished.withLock { $0 }
        #expect(ranOn != nil)
        #expect(ranOn == "elsewhere")
        _ = await call.value
        await client.close()
        context.terminate()
    }
}
