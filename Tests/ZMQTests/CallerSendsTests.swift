import Foundation
import Synchronization
import Testing
@testable import ZMQ

/// ``SocketOptions/callerSends``: callers send on their own thread while the socket thread
/// waits on the socket's edge-triggered `ZMQ_FD`.
@Suite("SocketActor, caller sends")
struct CallerSendsTests {
    /// Replies a DEALER receives, by body, resumed on the socket thread (as `RPCClient` does).
    final class Replies: Sendable {
        let waiting = Mutex<[String: CheckedContinuation<Void, Never>]>([:])
        let received = Atomic<Int>(0)

        func deliver(_ message: ReceivedMessage) {
            let key = String(decoding: message.frames.last ?? Data(), as: UTF8.self)
            received.add(1, ordering: .relaxed)
            waiting.withLock { $0.removeValue(forKey: key) }?.resume()
        }

        /// Registers for the reply to `key`, then sends it (a reply cannot overtake the registration).
        func exchange(_ key: String, on socket: SocketActor) async {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                waiting.withLock { $0[key] = c }
                socket.send([Data(key.utf8)])
            }
        }
    }

    /// A ROUTER on a free local TCP port (the queue-and-`zmq_poll` kind, as servers' peers are here).
    static func router(in context: ZMQContext, name: String) throws -> SocketActor {
        var options = SocketOptions(type: .router)
        options.binds = ["tcp://127.0.0.1:*"]
        return try SocketActor(context: context, options: options, name: name)
    }

    @Test("many callers, each waiting for its reply before the next request: every reply arrives (no lost wake-up)")
    func noLostWakeUps() async throws {
        let context = ZMQContext()
        let router = try Self.router(in: context, name: "echo")
        let echo = Task {
            for await m in router.messages { router.send(m.frames) }
        }
        let replies = Replies()
        var dealerOptions = SocketOptions(type: .dealer)
        dealerOptions.connects = router.boundEndpoints
        dealerOptions.callerSends = true
        // No tick: a lost wake-up is not rescued by a periodic poll, so it stalls the test.
        let dealer = try SocketActor(context: context, options: dealerOptions, name: "caller-sends",
                                     callbacks: .init(onMessage: { replies.deliver($0) }))
        let callers = 32, each = 400
        for c in 0..<callers {
            Task {
                for k in 0..<each {
                    await replies.exchange("\(c)-\(k)", on: dealer)
                    // Now and then idle, so the socket thread falls asleep between requests.
                    if k % 50 == 0 { try? await Task.sleep(for: .milliseconds(1)) }
                }
            }
        }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        while replies.received.load(ordering: .relaxed) < callers * each, clock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(replies.received.load(ordering: .relaxed) == callers * each)
        #expect(dealer.stats.sentByCaller.load(ordering: .relaxed) > 0)
        #expect(dealer.stats.sent.load(ordering: .relaxed) == callers * each)
        #expect(dealer.stats.dropped.load(ordering: .relaxed) == 0)
        await dealer.close()
        echo.cancel()
        await router.close()
        context.terminate()
    }

    @Test("messages that libzmq cannot take yet are queued, and later calls do not overtake them")
    func orderKeptWhilePending() async throws {
        let context = ZMQContext()
        let endpoint = "ipc:///tmp/chronir-caller-sends-\(UUID().uuidString)"
        var dealerOptions = SocketOptions(type: .dealer)
        dealerOptions.connects = [endpoint]
        // Only live connections take messages: until the peer binds, every send would block.
        dealerOptions.immediate = true
        dealerOptions.callerSends = true
        let dealer = try SocketActor(context: context, options: dealerOptions, name: "caller-sends")
        let total = 300
        for i in 0..<total / 2 { dealer.send([Data("\(i)".utf8)]) }
        var pullOptions = SocketOptions(type: .router)
        pullOptions.binds = [endpoint]
        let router = try SocketActor(context: context, options: pullOptions, name: "late-peer")
        for i in total / 2..<total { dealer.send([Data("\(i)".utf8)]) }
        var it = router.messages.makeAsyncIterator()
        for i in 0..<total {
            let m = try #require(await it.next())
            #expect(String(decoding: m.frames[1], as: UTF8.self) == "\(i)")
        }
        // The first half found no peer, so the socket thread sent them.
        let byThread = dealer.stats.sent.load(ordering: .relaxed) - dealer.stats.sentByCaller.load(ordering: .relaxed)
        #expect(byThread >= total / 2)
        #expect(dealer.stats.sent.load(ordering: .relaxed) == total)
        await dealer.close()
        await router.close()
        context.terminate()
    }

    @Test("terminating the context wakes a thread asleep on ZMQ_FD, which closes its socket")
    func terminateWhileAsleep() async throws {
        let context = ZMQContext()
        let router = try Self.router(in: context, name: "peer")
        var options = SocketOptions(type: .dealer)
        options.connects = router.boundEndpoints
        options.callerSends = true
        let dealer = try SocketActor(context: context, options: options, name: "asleep")
        dealer.send([Data("one".utf8)])
        var it = router.messages.makeAsyncIterator()
        _ = try #require(await it.next())
        try await Task.sleep(for: .milliseconds(20))
        // Neither socket is closed: the context's shutdown must reach both threads.
        let left = await context.terminate(within: .milliseconds(100))
        #expect(left.isEmpty)
        // The thread ended by itself; close() only waits for it.
        await dealer.close()
        await router.close()
    }

    @Test("a send after close is dropped and counted, and the socket is not touched")
    func sendAfterClose() async throws {
        let context = ZMQContext()
        var options = SocketOptions(type: .dealer)
        options.connects = ["tcp://127.0.0.1:9"]
        options.callerSends = true
        let dealer = try SocketActor(context: context, options: options, name: "closed")
        await dealer.close()
        dealer.send([Data("late".utf8)])
        #expect(dealer.stats.dropped.load(ordering: .relaxed) == 1)
        #expect(dealer.stats.sentByCaller.load(ordering: .relaxed) == 0)
        context.terminate()
    }
}
