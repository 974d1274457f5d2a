import AccountsService
import AlarmsService
import AsyncHTTPClient
import BillingService
import Foundation
import InvitationsService
import Messaging
import NotificationsService
import NIOCore
import NIOHTTP1
import Persistence
import SchedulerService
import ServiceKit
import Support
import Synchronization

/// One isolated copy of the suite's wiring for a test: a fresh database, free ports for every
/// service, and the environment each service gets.
final class TestSuite: Sendable {
    let databaseURL: String
    let ports: [ServiceDirectory.Name: (rpc: Int, pub: Int)]
    let http: HTTPClient
    let gatewayPort = Mutex<Int?>(nil)
    let running = Mutex<[RunningService]>([])
    /// The suite's own pools on its database, one per schema, each with the task that runs it.
    let pools = Mutex<(open: [String: (database: Database, task: Task<Void, Never>)], closed: Bool)>(([:], false))

    /// `databaseURL`: an existing database (a restored backup) instead of a new one.
    /// `migrated`: false for an empty database (a test that migrates it as an older release did).
    init(label: String, adminURL: String? = nil, databaseURL existing: String? = nil, migrated: Bool = true) async throws {
        if let existing {
            databaseURL = existing
        } else {
            databaseURL = !migrated || ProcessInfo.processInfo.environment["CHRONIR_TEST_TEMPLATE"] == "0"
                ? try await TestDatabase.create(label, adminURL: adminURL)  // each service migrates it (for comparison)
                : try await TestDatabase.create(label, adminURL: adminURL, migrated: Self.schemas)
        }
        var p: [ServiceDirectory.Name: (Int, Int)] = [:]
        for name in ServiceDirectory.Name.allCases { p[name] = (freePort(), freePort()) }
        ports = p
        // Created last: an HTTPClient must be shut down, so nothing may throw after it exists.
        http = HTTPClient(eventLoopGroupProvider: .singleton)
    }

    /// Every service's schema with the migrations the suites start it with: a suite's database
    /// is a copy of a template holding them all (``TestDatabase/create(_:adminURL:migrated:)``),
    /// and each service's migrator then finds nothing left to apply.
    static var schemas: [TestDatabase.MigratedSchema] {
        [("accounts", AccountsService.migrations), ("alarms", AlarmsService.migrations),
         ("scheduler", SchedulerService.migrations), ("notifications", NotificationsService.migrations),
         ("invitations", InvitationsService.migrations), ("billing", BillingService.migrations)]
    }

    /// The environment shared by every service of this suite.
    func environment(for service: String, extra: [String: String] = [:]) -> [String: String] {
        var env: [String: String] = [
            "DATABASE_URL": databaseURL,
            "CHRONIR_OPS_PORT": "0",
            "CHRONIR_LOG_LEVEL": ProcessInfo.processInfo.environment["CHRONIR_TEST_LOG_LEVEL"] ?? "critical",
            "CHRONIR_LOG_FORMAT": "text",
            "CHRONIR_SCRYPT_LOG_N": "10",
            "CHRONIR_INSTANCE_ID": "\(service)-test",
            "CHRONIR_OUTBOX_POLL": "100ms",
            "CHRONIR_OUTBOX_HEARTBEAT": "300ms",
            "CHRONIR_HTTP_PORT": "0",
            "CHRONIR_HTTP_HOST": "127.0.0.1",
            "CHRONIR_BUS_KEYS": TestBusKeys.directory,
            "CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR": "100000",
            // Webhooks go to the local fake push server (https://localhost:<port>): the checks
            // that refuse internal addresses are off unless a test turns them on
            // (Tests/NotificationsServiceTests/WebhookSSRFTests.swift).
            "CHRONIR_WEBHOOK_ALLOW_PRIVATE": "1",
            // A call to another service made inside a database transaction fails the request
            // (CA023), so every such call a test reaches is found (issue 60; ``TransactionScope``).
            "CHRONIR_CALLS_IN_TRANSACTIONS": "refuse",
        ]
        for (name, p) in ports {
            let prefix = "CHRONIR_\(name.rawValue.uppercased())"
            env["\(prefix)_RPC"] = "tcp://127.0.0.1:\(p.rpc)"
            env["\(prefix)_EVENTS"] = "tcp://127.0.0.1:\(p.pub)"
        }
        if let name = ServiceDirectory.Name(rawValue: service), let p = ports[name] {
            env["CHRONIR_RPC_BIND"] = "tcp://127.0.0.1:\(p.rpc)"
            env["CHRONIR_PUB_BIND"] = "tcp://127.0.0.1:\(p.pub)"
        }
        env.merge(extra) { _, new in new }
        return env
    }

    /// Starts a service in this process.
    @discardableResult
    func start(_ name: String, migrations: [Migration], extra: [String: String] = [:], build: @escaping ServiceHost.Build) throws -> RunningService {
        let service = try RunningService(name: name, environment: environment(for: name, extra: extra), migrations: migrations, build: build)
        running.withLock { $0.append(service) }
        return service
    }

    /// Starts a service without a database (the gateway) in this process.
    @discardableResult
    func start(_ name: String, extra: [String: String] = [:], build: @escaping ServiceHost.DatabaselessBuild) throws -> RunningService {
        let service = try RunningService(name: name, environment: environment(for: name, extra: extra), build: build)
        running.withLock { $0.append(service) }
        return service
    }

    /// The gateway's base URL once it listens.
    func gatewayURL() async throws -> String {
        let ok = await eventually(timeout: .seconds(30)) { gatewayPort.withLock { $0 } != nil }
        guard ok, let port = gatewayPort.withLock({ $0 }) else { throw TestSetupError("the gateway did not start") }
        return "http://127.0.0.1:\(port)"
    }

    /// Runs `body` with the suite's pool on `schema`: opened on first use, kept until
    /// ``shutdown()`` (a pool per query connected afresh on every 50 ms poll of a test).
    func inDatabase<T: Sendable>(_ schema: String, _ body: (Database) async throws -> T) async throws -> T {
        let database = try pools.withLock { pools in
            // A pool opened after shutdown would never be closed.
            guard !pools.closed else { throw TestSetupError("the suite was shut down; its database pools are closed") }
            if let open = pools.open[schema] { return open.database }
            let database = try TestDatabase.database(url: databaseURL, schema: schema, poolSize: 4)
            pools.open[schema] = (database, Task { await database.client.run() })
            return database
        }
        return try await body(database)
    }

    /// Stops everything started, newest first, then closes the suite's pools.
    func shutdown() async {
        for s in running.withLock({ $0 }).reversed() { await s.stop() }
        let tasks = pools.withLock { pools in
            defer { pools = ([:], true) }
            return pools.open.values.map(\.task)
        }
        for task in tasks { task.cancel() }
        // Closing is waited for 5 s at most (a connection whose close never ends would hold the test).
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for task in tasks { await task.value } }
            group.addTask { try? await Task.sleep(for: .seconds(5)) }
            await group.next()
            group.cancelAll()
        }
        try? await http.shutdown()
    }
}

/// Runs `body` with a new suite and always shuts it down, even when the body throws.
func withTestSuite(label: String, adminURL: String? = nil, databaseURL: String? = nil, migrated: Bool = true, start: (TestSuite) throws -> Void,
                   _ body: (TestSuite) async throws -> Void) async throws {
    let suite = try await TestSuite(label: label, adminURL: adminURL, databaseURL: databaseURL, migrated: migrated)
    do {
        try start(suite)
        try await body(suite)
    } catch {
        await suite.shutdown()
        throw error
    }
    await suite.shutdown()
}

/// An HTTP response as tests look at it.
struct HTTPResult: Sendable {
    let status: Int
    let headers: [(String, String)]
    let body: Data

    var json: JSONValue { (try? JSONCoding.decoder().decode(JSONValue.self, from: body)) ?? .null }
    var text: String { String(decoding: body, as: UTF8.self) }
    var code: String? { json["code"]?.stringValue }
    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try JSONCoding.decoder().decode(T.self, from: body) }
}

extension TestSuite {
    /// Sends a request to the gateway.
    func request(_ method: HTTPMethod, _ path: String, token: String? = nil, json: Any? = nil, body: String? = nil,
                 bytes: Data? = nil, headers: [String: String] = [:]) async throws -> HTTPResult {
        var request = HTTPClientRequest(url: try await gatewayURL() + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (k, v) in headers { request.headers.add(name: k, value: v) }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: json)))
        } else if let body {
            request.body = .bytes(ByteBuffer(string: body))
        } else if let bytes {
            request.body = .bytes(ByteBuffer(data: bytes))
        }
        let response = try await http.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        return HTTPResult(status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) }, body: Data(buffer: bytes))
    }
}

/// NIO's HTTP method type, named for tests.
typealias NIOHTTPMethodAlias = HTTPMethod
