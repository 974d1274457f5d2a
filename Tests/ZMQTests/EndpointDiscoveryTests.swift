import Foundation
import Synchronization
import Testing
@testable import ZMQ

@Suite("EndpointDiscovery")
struct EndpointDiscoveryTests {
    @Test("a name becomes one endpoint per address; addresses, wildcards and other transports stay")
    func expands() {
        let d = EndpointDiscovery(["tcp://alarms:7102", "tcp://10.0.0.9:7102", "tcp://*:7000", "inproc://x", "tcp://[::1]:5"]) { host in
            host == "alarms" ? ["10.0.0.2", "10.0.0.1"] : []
        }
        #expect(d.hasNames)
        #expect(d.current() == ["tcp://10.0.0.1:7102", "tcp://10.0.0.2:7102", "tcp://10.0.0.9:7102", "tcp://*:7000",
                                "inproc://x", "tcp://[::1]:5"])
        #expect(!EndpointDiscovery(["tcp://127.0.0.1:1", "tcp://[::1]:2"]).hasNames)
    }

    @Test("a name that does not resolve is kept as the name, or keeps the addresses it had (its own only)")
    func unresolved() {
        let d = EndpointDiscovery(["tcp://alarms:7102", "tcp://billing:7102"]) { host in host == "billing" ? ["10.0.0.9"] : [] }
        #expect(d.current() == ["tcp://alarms:7102", "tcp://10.0.0.9:7102"])
        let kept = d.resolved(previous: ["tcp://alarms:7102": ["tcp://10.0.0.1:7102"], "tcp://billing:7102": ["tcp://10.0.0.8:7102"]])
        #expect(d.flatten(kept) == ["tcp://10.0.0.1:7102", "tcp://10.0.0.9:7102"])
    }

    @Test("changes connect what appeared and disconnect what went away")
    func changes() {
        let c = EndpointDiscovery.changes(from: ["a", "b"], to: ["b", "c"])
        #expect(c.connect == ["c"])
        #expect(c.disconnect == ["a"])
    }

    @Test("getaddrinfo resolves localhost to 127.0.0.1")
    func resolvesLocalhost() {
        #expect(EndpointDiscovery.addresses(of: "localhost").contains("127.0.0.1"))
        #expect(EndpointDiscovery.addresses(of: "no-such-host.invalid").isEmpty)
    }

    /// Two replicas behind one name on one port (127.0.0.2 and 127.0.0.3): a DEALER given the
    /// name reaches the first, then both once the name resolves to both, then only the second once
    /// the first is gone from the name.
    @Test("a DEALER follows the replicas behind a name as they come and go")
    func dealerFollowsReplicas() async throws {
        let context = ZMQContext()
        var a = SocketOptions(type: .router)
        a.binds = ["tcp://127.0.0.2:*"]
        let replicaA = try SocketActor(context: context, options: a, name: "a")
        let port = try #require(replicaA.boundEndpoints.first?.split(separator: ":").last.map(String.init))
        var b = SocketOptions(type: .router)
        b.binds = ["tcp://127.0.0.3:\(port)"]
        let replicaB = try SocketActor(context: context, options: b, name: "b")
        let addresses = Box(["127.0.0.2"])
        var options = SocketOptions(type: .dealer)
        options.connects = ["tcp://replicas.test:\(port)"]
        options.discoveryInterval = .milliseconds(50)
        options.resolve = { host in host == "replicas.test" ? addresses.value.withLock { $0 } : [] }
        let dealer = try SocketActor(context: context, options: options, name: "dealer")
        let counts = Box((a: 0, b: 0))
        let readers = [Task { for await _ in replicaA.messages { counts.value.withLock { $0.a += 1 } } },
                       Task { for await _ in replicaB.messages { counts.value.withLock { $0.b += 1 } } }]

        func send(_ n: Int) async {
            for _ in 0..<n {
                dealer.send([Data("x".utf8)])
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        func settled(_ total: Int) async -> (a: Int, b: Int) {
            for _ in 0..<200 where counts.value.withLock({ $0.a + $0.b }) < total { try? await Task.sleep(for: .milliseconds(10)) }
            return counts.value.withLock { $0 }
        }
        await send(10)
        let first = await settled(10)
        #expect(first.a == 10 && first.b == 0)

        addresses.value.withLock { $0 = ["127.0.0.2", "127.0.0.3"] }
        try await Task.sleep(for: .milliseconds(400))
        await send(40)
        let both = await settled(50)
        #expect(both.a + both.b == 50)
        #expect(both.a >= 20 && both.b >= 10, "round-robin over both replicas: \(both)")

        addresses.value.withLock { $0 = ["127.0.0.3"] }
        try await Task.sleep(for: .milliseconds(400))
        await send(20)
        let last = await settled(70)
        #expect(last.a == both.a, "nothing more to the replica that left the name")
        #expect(last.b == both.b + 20)
        #expect(dealer.stats.discoveryChanges.load(ordering: .relaxed) == 2)

        await dealer.close()
        await replicaA.close()
        await replicaB.close()
        for r in readers { await r.value }
        context.terminate()
    }
}

/// A value shared with the tasks and closures of a test.
private final class Box<T: Sendable>: Sendable {
    let value: Mutex<T>
    init(_ initial: T) { value = Mutex(initial) }
}
