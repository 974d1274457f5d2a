import Foundation
import Logging
import NIOPosix
import Persistence
import PostgresNIO

/// Fresh databases on the throwaway PostgreSQL that `make test` starts
/// (`CHRONIR_TEST_DATABASE_URL`, default `postgres://postgres@127.0.0.1:55432/postgres`).
public enum TestDatabase {
    /// The admin URL of the test cluster.
    public static var adminURL: String {
        ProcessInfo.processInfo.environment["CHRONIR_TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:55432/postgres"
    }

    /// Creates an empty database and returns its URL (same credentials as the admin URL).
    public static func create(_ label: String = "t", adminURL: String? = nil) async throws -> String {
        let name = "\(label.lowercased().filter { $0.isLetter || $0.isNumber })_\(UInt32.random(in: 0...UInt32.max))"
        let adminURL = adminURL ?? self.adminURL
        try await admin(url: adminURL) { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(name)\""), logger: quiet)
        }
        var components = URLComponents(string: adminURL)!
        components.path = "/\(name)"
        return components.string!
    }

    /// Runs statements on the admin database.
    public static func admin(url: String? = nil, _ body: (PostgresConnection) async throws -> Void) async throws {
        let adminURL = url ?? self.adminURL
        let config = try DatabaseConfig.parse(url: adminURL, schema: "public")
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.next(),
                configuration: .init(host: config.host, port: config.port, username: config.username,
                                     password: config.password, database: config.database, tls: .disable),
                id: 1, logger: quiet)
        } catch {
            throw TestSetupError("cannot reach the test PostgreSQL at \(adminURL) — run the tests with `make test`, which starts it (\(error))")
        }
        do {
            try await body(connection)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }

    /// Opens a pool on `url` for `schema` (the caller runs it and closes it).
    public static func database(url: String, schema: String, poolSize: Int = 8) throws -> Database {
        var config = try DatabaseConfig.parse(url: url, schema: schema)
        config.poolSize = poolSize
        return try Database(config: config, logger: quiet)
    }

    static let quiet = Logger(label: "test-db", factory: { _ in SwiftLogNoOpLogHandler() })
}

/// A test precondition that does not hold (no database, missing binary).
public struct TestSetupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Runs `body` with a running pool on `url`/`schema`, then shuts the pool down.
public func withDatabase<T: Sendable>(url: String, schema: String, _ body: (Database) async throws -> T) async throws -> T {
    let database = try TestDatabase.database(url: url, schema: schema)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await database.client.run() }
        defer { group.cancelAll() }
        return try await body(database)
    }
}

/// The first column of the first row of `sql` on `url`/`schema` as an integer; nil when there
/// is none or the database does not answer (for polling with ``eventually(timeout:every:_:)``).
public func scalar(_ url: String, _ schema: String, _ sql: String) async -> Int? {
    try? await withDatabase(url: url, schema: schema) { db in
        try await db.query(PostgresQuery(unsafeSQL: sql)).first(Int.self)
    }
}

/// Polls `condition` until it holds or `timeout` passes; returns whether it held.
public func eventually(timeout: Duration = .seconds(10), every: Duration = .milliseconds(50),
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: every)
    }
    return try await condition()
}
