import Foundation
import Messaging
import Support
import Synchronization
import Testing
import ZMQ

struct AdminBump: RPCMethod {
    typealias Request = Empty
    struct Response: Codable, Sendable { var n: Int }
    static let type = "test.admin.bump"
    static let access = MethodAccess.operatorOnly
}

/// A stand-in with the name and access of the real `alarms.get` (read as a user by invitations
/// and billing).
struct ReadAlarm: RPCMethod {
    typealias Request = Empty
    struct Response: Codable, Sendable { var actor: String? }
    static let type = "alarms.get"
    static let access = MethodAccess.edge(and: "invitations", "billing")
}

final class Received: Sendable { let counts = Mutex<[String: Int]>([:]) }

/// CurveZMQ on the internal bus: who may connect, who may call what, who may act for a user.
@Suite("The internal bus is authenticated (CurveZMQ + ZAP)", .serialized)
struct BusSecurityTests {
    /// An "alarms" server on a secured context: `test.count` (any service), `test.echo` (returns
    /// the actor), an operator-only `test.admin.bump`, and `events.push` fed to a subscriber of
    /// the scheduler's stream.
    final class Server: Sendable {
        let context: ZMQContext
        let server: RPCServer
        let counted = AtomicCounter()
        let bumped = AtomicCounter()
        let task: Task<Void, any Error>

        init() throws {
            context = try TestBusKeys.context("alarms")
            var router = RPCRouter()
            let counted = self.counted, bumped = self.bumped
            router.on(Count.self) { _, _ in Count.Response(n: counted.value.add(1, ordering: .relaxed).newValue) }
            router.on(Echo.self) { request, context in Echo.Response(text: request.text, actor: context.actor) }
            router.on(ReadAlarm.self) { _, context in ReadAlarm.Response(actor: context.actor) }
            router.on(AdminBump.self) { _, _ in AdminBump.Response(n: bumped.value.add(1, ordering: .relaxed).newValue) }
            let subscriber = try EventSubscriber(context: context, name: "scheduler", endpoints: [], consumers: [], telemetry: .discarding())
            subscriber.register(in: &router)
            server = try RPCServer(context: context, serviceName: "alarms", instance: "t1", binds: ["tcp://127.0.0.1:*"],
                                   router: router, telemetry: .discarding())
            let server = self.server
            task = Task { try await server.run() }
        }

        /// A client of this server from `context`.
        func client(_ context: ZMQContext) throws -> RPCClient {
            try RPCClient(context: context, target: "alarms", endpoints: server.endpoints, source: "tests/1",
                          telemetry: .discarding(), defaultTimeout: .seconds(5))
        }

        func shutdown() async {
            task.cancel()
            await server.close()
            context.terminate()
        }
    }

    /// Runs `body` with a client of `server` from `context` and closes both afterwards.
    func with<T: Sendable>(_ server: Server, _ context: ZMQContext, _ body: (RPCClient) async throws -> T) async throws -> T {
        let client = try server.client(context)
        defer { context.terminate() }
        do {
            let r = try await body(client)
            await client.close()
            return r
        } catch {
            await client.close()
            throw error
        }
    }

    func code(_ body: () async throws -> Void) async -> ErrorCode? {
        do {
            try await body()
            return nil
        } catch let e as ServiceError {
            return e.code
        } catch {
            return .internalError
        }
    }

    /// A context with a key pair nobody trusts (it trusts the real servers, so it can try).
    func intruder() throws -> ZMQContext {
        let real = try BusSecurity.load(principal: "gateway", publicKeysDirectory: "\(TestBusKeys.directory)/public",
                                        secretKeyFile: KeyFile.secretPath(TestBusKeys.directory, "gateway"))
        var keys = real.publicKeys
        keys["gateway"] = nil
        return try ZMQContext(security: BusSecurity(principal: "gateway", keys: try CurveKeyPair.generate(), publicKeys: keys))
    }

    @Test("a peer without a key, or with an unknown key, gets no answer and changes nothing")
    func strangersGetNothing() async throws {
        let s = try Server()
        // A trusted service is answered.
        let n = try await with(s, try TestBusKeys.context("scheduler")) { try await $0.call(Count.self, Empty()).n }
        #expect(n == 1)
        // No CURVE at all: the handshake fails, the request never reaches a handler.
        let plain = await code { _ = try await with(s, ZMQContext()) { try await $0.call(Count.self, Empty(), timeout: .seconds(1)) } }
        #expect(plain == .deadlineExceeded)
        // CURVE with a key the ZAP handler does not know: refused at the handshake.
        let unknown = await code { _ = try await with(s, try intruder()) { try await $0.call(Count.self, Empty(), actor: "u1", timeout: .seconds(1)) } }
        #expect(unknown == .deadlineExceeded)
        #expect(s.counted.value.load(ordering: .relaxed) == 1)
        await s.shutdown()
    }

    @Test("operator-only methods answer only the operator key; a service key gets CA030 and nothing changes")
    func operatorOnly() async throws {
        let s = try Server()
        let byService = await code { _ = try await with(s, try TestBusKeys.context("billing")) { try await $0.call(AdminBump.self, Empty()) } }
        #expect(byService == .callerNotAllowed)
        let byGateway = await code { _ = try await with(s, try TestBusKeys.context("gateway")) { try await $0.call(AdminBump.self, Empty()) } }
        #expect(byGateway == .callerNotAllowed)
        #expect(s.bumped.value.load(ordering: .relaxed) == 0)
        let n = try await with(s, try TestBusKeys.context(BusPolicy.operatorPrincipal)) { try await $0.call(AdminBump.self, Empty()).n }
        #expect(n == 1)
        await s.shutdown()
    }

    @Test("only the gateway and the listed services may act for a user, the services only for their listed methods")
    func actingForUsers() async throws {
        let s = try Server()
        let r = try await with(s, try TestBusKeys.context("gateway")) { try await $0.call(Echo.self, .init(text: "hi"), actor: "u1") }
        #expect(r.actor == "u1")
        for principal in ["invitations", "billing"] {
            let read = try await with(s, try TestBusKeys.context(principal)) { try await $0.call(ReadAlarm.self, Empty(), actor: "u1") }
            #expect(read.actor == "u1", "\(principal)")
            let c = await code { _ = try await with(s, try TestBusKeys.context(principal)) { try await $0.call(Echo.self, .init(text: "hi"), actor: "u1") } }
            #expect(c == .callerNotAllowed, "\(principal) acted for a user on test.echo")
        }
        for principal in ["scheduler", "notifications", "accounts", BusPolicy.operatorPrincipal] {
            let c = await code { _ = try await with(s, try TestBusKeys.context(principal)) { try await $0.call(Echo.self, .init(text: "hi"), actor: "u1") } }
            #expect(c == .callerNotAllowed, "\(principal)")
        }
        // Without an actor any service may call a method open to services.
        let plain = try await with(s, try TestBusKeys.context("scheduler")) { try await $0.call(Echo.self, .init(text: "hi")) }
        #expect(plain.actor == nil)
        await s.shutdown()
    }

    @Test("events.push is accepted only from the stream's producer")
    func pushOnlyFromProducer() async throws {
        let s = try Server()
        let batch = try JSONCoding.encode(EventBatch(stream: "scheduler", head: 0, firstAvailable: 1, events: []))
        let forged = await code {
            _ = try await with(s, try TestBusKeys.context("billing")) {
                try await $0.callRaw(type: EventMethods.push, payload: batch, timeout: .seconds(2))
            }
        }
        #expect(forged == .callerNotAllowed)
        // The producer's push is taken (a one-way message: no reply, so the wait runs out).
        let genuine = await code {
            _ = try await with(s, try TestBusKeys.context("scheduler")) {
                try await $0.callRaw(type: EventMethods.push, payload: batch, timeout: .seconds(1))
            }
        }
        #expect(genuine == .deadlineExceeded)
        await s.shutdown()
    }

    @Test("a subscriber without a trusted key receives no event; a trusted one does")
    func streamsNeedAKey() async throws {
        let producer = try TestBusKeys.context("accounts")
        let pub = try PubEventSink(context: producer, name: "accounts", binds: ["tcp://127.0.0.1:*"])
        func subscriber(_ context: ZMQContext, _ name: String) throws -> SocketActor {
            var options = SocketOptions(type: .sub)
            options.connects = pub.endpoints
            options.subscriptions = [Data("accounts".utf8)]
            options.curve = .client(server: "accounts")
            return try SocketActor(context: context, options: options, name: name)
        }
        let trustedContext = try TestBusKeys.context("alarms"), plainContext = ZMQContext(), intruderContext = try intruder()
        let trusted = try subscriber(trustedContext, "trusted")
        let plain = try subscriber(plainContext, "plain")
        let intruding = try subscriber(intruderContext, "intruder")
        let received = Received()
        let readers = [("trusted", trusted), ("plain", plain), ("intruder", intruding)].map { name, socket in
            Task { for await _ in socket.messages { received.counts.withLock { $0[name, default: 0] += 1 } } }
        }
        // Publish until the trusted subscriber has joined and seen events, then a while longer.
        var seq: Int64 = 0
        let clock = ContinuousClock(), start = clock.now
        while clock.now - start < .seconds(3) {
            seq += 1
            pub.publish(stream: "accounts", events: [(seq: seq, envelope: Data("{}".utf8))])
            try await Task.sleep(for: .milliseconds(50))
        }
        let counts = received.counts.withLock { $0 }
        #expect((counts["trusted"] ?? 0) > 10)
        #expect(counts["plain"] == nil)
        #expect(counts["intruder"] == nil)
        for s in [trusted, plain, intruding] { await s.close() }
        for r in readers { await r.value }
        await pub.close()
        for c in [trustedContext, plainContext, intruderContext, producer] { c.terminate() }
    }
}
