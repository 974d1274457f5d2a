import Foundation
import Testing
@testable import ZMQ

@Suite("SocketActor")
struct SocketActorTests {
    @Test("DEALER to ROUTER round trip over tcp")
    func roundTrip() async throws {
        let context = ZMQContext()
        var routerOptions = SocketOptions(type: .router)
        routerOptions.binds = ["tcp://127.0.0.1:*"]
        let router = try SocketActor(context: context, options: routerOptions, name: "router")
        var dealerOptions = SocketOptions(type: .dealer)
        dealerOptions.connects = router.boundEndpoints
        let dealer = try SocketActor(context: context, options: dealerOptions, name: "dealer")

        dealer.send([Data("ping".utf8)])
        var routerIterator = router.messages.makeAsyncIterator()
        let request = try #require(await routerIterator.next())
        #expect(request.frames.count == 2)
        #expect(request.frames[1] == Data("ping".utf8))
        router.send([request.frames[0], Data("pong".utf8)])
        var dealerIterator = dealer.messages.makeAsyncIterator()
        let reply = try #require(await dealerIterator.next())
        #expect(reply.frames == [Data("pong".utf8)])

        await dealer.close()
        await router.close()
        #expect(await dealerIterator.next() == nil)
        context.terminate()
    }

    @Test("frames over the limit are reported as oversized and the socket keeps serving")
    func oversized() async throws {
        let context = ZMQContext()
        var routerOptions = SocketOptions(type: .router)
        routerOptions.binds = ["tcp://127.0.0.1:*"]
        routerOptions.maxFrameBytes = 1024
        let router = try SocketActor(context: context, options: routerOptions, name: "router")
        var dealerOptions = SocketOptions(type: .dealer)
        dealerOptions.connects = router.boundEndpoints
        let dealer = try SocketActor(context: context, options: dealerOptions, name: "dealer")

        dealer.send([Data(repeating: 7, count: 4096)])
        dealer.send([Data("small".utf8)])
        var it = router.messages.makeAsyncIterator()
        let first = try #require(await it.next())
        #expect(first.oversizedBytes == 4096)
        #expect(first.frames[1].isEmpty)
        let second = try #require(await it.next())
        #expect(second.oversizedBytes == nil)
        #expect(second.frames[1] == Data("small".utf8))
        #expect(router.stats.oversized.load(ordering: .relaxed) == 1)
        await dealer.close()
        await router.close()
        context.terminate()
    }

    @Test("a full mailbox pushes back instead of losing messages")
    func backpressure() async throws {
        let context = ZMQContext()
        var pullOptions = SocketOptions(type: .pull)
        pullOptions.binds = ["tcp://127.0.0.1:*"]
        pullOptions.mailboxCapacity = 16
        let pull = try SocketActor(context: context, options: pullOptions, name: "pull")
        var pushOptions = SocketOptions(type: .push)
        pushOptions.connects = pull.boundEndpoints
        let push = try SocketActor(context: context, options: pushOptions, name: "push")
        let total = 5_000
        for i in 0..<total { push.send([Data("\(i)".utf8)]) }
        var it = pull.messages.makeAsyncIterator()
        for i in 0..<total {
            let m = try #require(await it.next())
            #expect(String(decoding: m.frames[0], as: UTF8.self) == "\(i)")
            if i % 1000 == 0 { try await Task.sleep(for: .milliseconds(5)) }
        }
        await push.close()
        await pull.close()
        context.terminate()
    }

    @Test("binding a used address fails with a clear error")
    func bindFailure() throws {
        let context = ZMQContext()
        var options = SocketOptions(type: .router)
        options.binds = ["tcp://127.0.0.1:*"]
        let first = try SocketActor(context: context, options: options, name: "first")
        options.binds = first.boundEndpoints
        #expect(throws: ZMQError.self) { _ = try SocketActor(context: context, options: options, name: "second") }
        Task { await first.close(); context.terminate() }
    }
}
