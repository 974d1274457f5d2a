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
        return url(adminURL, database: name)
    }

    /// A schema and the migrations a service applies to it.
    public typealias MigratedSchema = (schema: String, migrations: [Migration])

    /// Creates a database copied from a template that already holds `schemas` migrated, and
    /// returns its URL. The services that start on it find every migration applied, so a test
    /// pays for a file copy instead of running every migration again. The template is made once
    /// per cluster and set of migrations (its name carries a hash of every schema, version and
    /// checksum, so a changed migration makes a new one), by whichever test process asks first:
    /// built under a name of its own and renamed into place, so no process copies a template
    /// that is half migrated, and two builders racing keep one template.
    public static func create(_ label: String = "t", adminURL: String? = nil, migrated schemas: [MigratedSchema]) async throws -> String {
        let adminURL = adminURL ?? self.adminURL
        let template = try await self.template(schemas, adminURL: adminURL)
        let name = "\(label.lowercased().filter { $0.isLetter || $0.isNumber })_\(UInt32.random(in: 0...UInt32.max))"
        try await admin(url: adminURL) { connection in
            // A builder's connections may still be closing just after its rename (55006).
            try await retryingInUse {
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(name)\" TEMPLATE \"\(template)\""), logger: quiet)
            }
        }
        return url(adminURL, database: name)
    }

    /// The name of the template database holding `schemas` migrated, made when missing.
    static func template(_ schemas: [MigratedSchema], adminURL: String) async throws -> String {
        // FNV-1a over every schema, version and checksum. (A change of the Migrator's own table
        // is not in it: on a long-lived cluster, drop the template_* databases after one; `make
        // test` starts a fresh cluster every run.)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for (schema, migrations) in schemas {
            for m in migrations {
                for byte in "\(schema):\(m.version):\(m.checksum);".utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            }
        }
        let name = "template_\(String(hash, radix: 16))"
        var exists = false
        try await admin(url: adminURL) { connection in
            exists = try await connection.query("SELECT 1 FROM pg_database WHERE datname = \(name)", logger: quiet).collect().count == 1
        }
        if exists { return name }
        let building = "\(name)_\(UInt32.random(in: 0...UInt32.max))"
        try await admin(url: adminURL) { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(building)\""), logger: quiet)
        }
        do {
            for (schema, migrations) in schemas {
                let database = try self.database(url: url(adminURL, database: building), schema: schema, poolSize: 1)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await database.client.run() }
                    defer { group.cancelAll() }
                    try await Migrator(database: database).migrate(migrations)
                }
            }
            try await admin(url: adminURL) { connection in
                do {
                    try await retryingInUse {
                        try await connection.query(PostgresQuery(unsafeSQL: "ALTER DATABASE \"\(building)\" RENAME TO \"\(name)\""), logger: quiet)
                    }
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P04" {
                    // Another process built it first: use that one.
                    try await connection.query(PostgresQuery(unsafeSQL: "DROP DATABASE \"\(building)\" WITH (FORCE)"), logger: quiet)
                }
            }
        } catch {
            // A migration that fails (or a rename that never gets the database to itself) leaves
            // no half-built template behind.
            try? await admin(url: adminURL) { connection in
                try await connection.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \"\(building)\" WITH (FORCE)"), logger: quiet)
            }
            throw error
        }
        return name
    }

    /// Runs `body` again while PostgreSQL answers 55006 (the database is in use), for 10 s at most.
    static func retryingInUse(_ body: () async throws -> Void) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            do {
                return try await body()
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55006" && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    static func url(_ adminURL: String, database: String) -> String {
        var components = URLComponents(string: adminURL)!
        components.path = "/\(database)"
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
