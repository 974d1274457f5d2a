import Foundation
import Messaging
import Persistence
import PostgresNIO
import Support
import Testing
import ZMQ

/// A link that drops everything without closing (issue 58): a black hole between a consumer and
/// its producer's PUB socket, or a peer frozen behind a TCP stack that still acknowledges.
/// Nothing errs, so before this nothing noticed: the consumer stayed behind with its lag 0.
@Suite("Silent links", .serialized)
struct SilentLinkTests {
    @Test("ZMTP heartbeats: a connection through a black hole is dropped and made again within the timeout; without heartbeats it never is")
    func heartbeatsNoticeABlackHole() async throws {
        let beating = ZMQContext(heartbeat: ZMQHeartbeat(interval: .milliseconds(200), timeout: .milliseconds(600)))
        let silent = ZMQContext(heartbeat: nil)
        var pairs: [(router: SocketActor, dealer: SocketActor, proxy: TCPProxy)] = []
        for context in [beating, silent] {
            var routerOptions = SocketOptions(type: .router)
            routerOptions.binds = ["tcp://127.0.0.1:*"]
            let router = try SocketActor(context: context, options: routerOptions, name: "router")
            let port = try #require(router.boundEndpoints.first.flatMap { $0.split(separator: ":").last.flatMap { Int($0) } })
            let proxy = try TCPProxy(upstreamPort: port)
            var dealerOptions = SocketOptions(type: .dealer)
            dealerOptions.connects = ["tcp://127.0.0.1:\(proxy.port)"]
            let dealer = try SocketActor(context: context, options: dealerOptions, name: "dealer")
            // The link works before the cut.
            dealer.send([Data("ping".utf8)])
            var requests = router.messages.makeAsyncIterator()
            let first = try #require(await requests.next())
            #expect(first.frames.last == Data("ping".utf8))
            pairs.append((router, dealer, proxy))
        }
        for p in pairs { p.proxy.cut() }
        // With heartbeats the dealer stops hearing PONGs, drops the connection and makes a new
        // one (accepted by the proxy, reaching nothing); without, it waits for ever.
        #expect(await eventually(timeout: .seconds(5)) { pairs[0].proxy.accepted >= 2 },
                "the heartbeating dealer kept its dead connection (accepted \(pairs[0].proxy.accepted))")
        try await Task.sleep(for: .seconds(2))
        #expect(pairs[1].proxy.accepted == 1, "without heartbeats the dead connection was noticed after all (accepted \(pairs[1].proxy.accepted))")
        for p in pairs {
            await p.dealer.close()
            await p.router.close()
            p.proxy.close()
        }
        beating.terminate()
        silent.terminate()
    }


    @Test("a consumer whose PUB link is a black hole hears nothing for CHRONIR_CONSUMER_SILENCE, asks the producer and applies every event once")
    func silentConsumerAsks() async throws {
        let url = try await TestDatabase.create("silence")
        let (rpc, pub) = (freePort(), freePort())
        let producerEnv = ["DATABASE_URL": url, "CHRONIR_RPC_BIND": "tcp://127.0.0.1:\(rpc)", "CHRONIR_PUB_BIND": "tcp://127.0.0.1:\(pub)",
                           "CHRONIR_BUS_KEYS": TestBusKeys.directory, "CHRONIR_OUTBOX_POLL": "100ms", "CHRONIR_OUTBOX_HEARTBEAT": "300ms"]
        // 1. Five events, applied by the consumer as it starts (a replay).
        let early = try TestProcess("chronir-testpeer", ["produce", "--count", "5"], environment: producerEnv, label: "producer-early")
        #expect(await early.waitForOutput("appended 5 events", timeout: .seconds(60)), "\(early.output.suffix(2000))")
        let proxy = try TCPProxy(upstreamPort: pub)
        defer { proxy.close() }
        let consumer = try TestProcess("chronir-testpeer", ["consume"], environment: [
            "DATABASE_URL": url, "PEER_RPC": "tcp://127.0.0.1:\(rpc)", "PEER_EVENTS": "tcp://127.0.0.1:\(proxy.port)",
            "CHRONIR_BUS_KEYS": TestBusKeys.directory, "CHRONIR_LOG_LEVEL": "info", "CHRONIR_CONSUMER_SILENCE": "1s",
            // ZMTP heartbeats off here: this test is about the consumer's own watch, which must
            // hold also where heartbeats cannot help (a subscription lost inside a live link).
            "CHRONIR_BUS_HEARTBEAT": "0",
        ], label: "consumer-silent-link")
        let checkpoint = "SELECT seq::int FROM consumer_checkpoints WHERE stream = 'producer'"
        #expect(await eventually(timeout: .seconds(30)) { await scalar(url, "consumer", checkpoint) == 5 },
                "\(consumer.output.suffix(3000))")
        // 2. The link goes silent; the producer restarts and appends 20 more, published into the hole.
        proxy.cut()
        #expect(await early.terminate() == 0, "\(early.output.suffix(2000))")
        let later = try TestProcess("chronir-testpeer", ["produce", "--count", "20"], environment: producerEnv, label: "producer-later")
        #expect(await later.waitForOutput("appended 20 events", timeout: .seconds(60)), "\(later.output.suffix(2000))")
        // 3. Nothing reaches the consumer live; its silence watch asks the producer.
        let caughtUp = await eventually(timeout: .seconds(20)) { await scalar(url, "consumer", checkpoint) == 25 }
        let stayed = await scalar(url, "consumer", checkpoint) ?? -1
        #expect(caughtUp, "the consumer stayed at \(stayed) behind a silent link: \(consumer.output.suffix(3000))")
        #expect(consumer.output.contains("nothing from the producer"), "\(consumer.output.suffix(3000))")
        #expect(await scalar(url, "consumer", "SELECT count(*)::int FROM applied") == 25, "an event was applied twice or not at all")
        #expect(await consumer.terminate() == 0, "\(consumer.output.suffix(2000))")
        await later.terminate()
    }
}
