import Foundation
import Logging
import Messaging
import Persistence
import Support
import Synchronization
import Testing
import ZMQ

/// A call to another service made inside a database transaction (issue 60): it would hold the
/// transaction's connection and row locks until the answer. `Database.transaction` marks its
/// task (`TransactionScope`); an `RPCClient` set to refuse answers CA023 without sending, one set
/// to warn sends it; the same call before or after the transaction goes through either way.
@Suite("Calls inside transactions")
struct TransactionCallTests {
    struct Ping: RPCMethod {
        struct Request: Codable, Sendable { var n: Int }
        struct Response: Codable, Sendable { var n: Int }
        static let type = "test.ping"
    }

    @Test("a refusing client answers CA023 to a call inside a transaction, without sending it; before and after the transaction, and a warning client, send it")
    func refusedInsideTransaction() async throws {
        let url = try await TestDatabase.create("calls-in-tx")
        var config = try DatabaseConfig.parse(url: url, schema: "public")
        config.poolSize = 2
        let db = try Database(config: config, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let context = ZMQContext()
        let received = Mutex(0)
        var router = RPCRouter()
        router.on(Ping.self) { request, _ in
            received.withLock { $0 += 1 }
            return Ping.Response(n: request.n)
        }
        let server = try RPCServer(context: context, serviceName: "pinged", instance: "p1", binds: ["tcp://127.0.0.1:*"],
                                   router: router, telemetry: .discarding())
        let serving = Task { try await server.run() }
        let refusing = try RPCClient(context: context, target: "pinged", endpoints: server.endpoints, source: "tests/1",
                                     telemetry: .discarding(), insideTransaction: .refuse)
        let warning = try RPCClient(context: context, target: "pinged", endpoints: server.endpoints, source: "tests/2",
                                    telemetry: .discarding(), insideTransaction: .warn)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await db.client.run() }
            defer { group.cancelAll() }
            #expect(try await refusing.call(Ping.self, .init(n: 1)).n == 1)
            let inside: ServiceError? = try await db.transaction { c in
                _ = try await c.query("SELECT 1", logger: Logger(label: "test")).collect()
                do {
                    _ = try await refusing.call(Ping.self, .init(n: 2))
                    return nil
                } catch let e as ServiceError {
                    return e
                }
            }
            #expect(inside?.code == .internalError, "the call inside the transaction was \(inside.map { "\($0)" } ?? "sent")")
            #expect(inside?.message.contains("inside a database transaction") == true)
            #expect(received.withLock { $0 } == 1, "the refused call reached the server")
            let warned = try await db.transaction { _ in try await warning.call(Ping.self, .init(n: 3)).n }
            #expect(warned == 3)
            #expect(try await refusing.call(Ping.self, .init(n: 4)).n == 4)
            #expect(received.withLock { $0 } == 3)
        }
        await refusing.close(); await warning.close()
        serving.cancel()
        await server.close()
        context.terminate()
    }
}
