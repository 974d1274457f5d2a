import Crypto
import Foundation
import Wire
import Logging
import PostgresNIO

/// One numbered schema change of a service.
public struct Migration: Sendable {
    /// Strictly increasing, starting at 1.
    public var version: Int
    /// A short name, recorded with the version.
    public var name: String
    /// The SQL statements, run in order (one statement per string: the extended protocol
    /// takes one at a time, and this keeps function bodies with semicolons intact).
    public var statements: [String]

    public init(_ version: Int, _ name: String, _ statements: [String]) {
        self.version = version
        self.name = name
        self.statements = statements
    }

    /// A checksum of the statements: an applied migration that was edited afterwards is
    /// reported instead of silently diverging.
    public var checksum: String {
        let digest = SHA256.hash(data: Data(statements.joined(separator: "\n;\n").utf8))
        return Hex.lowercase(digest)
    }
}

/// Applies a service's migrations at start, once, under an advisory lock, so several
/// replicas starting together do not race. Already-applied versions are skipped, which makes
/// running the migrator twice a no-op.
public struct Migrator: Sendable {
    let database: Database

    public init(database: Database) {
        self.database = database
    }

    /// Why migrating stopped.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Creates the schema when needed and applies pending migrations in one transaction.
    /// Returns the versions applied now.
    @discardableResult
    public func migrate(_ migrations: [Migration]) async throws -> [Int] {
        let versions = migrations.map(\.version)
        guard versions == versions.sorted(), Set(versions).count == versions.count, versions.first.map({ $0 >= 1 }) ?? true else {
            throw Failure(description: "migrations must have unique, increasing versions starting at 1")
        }
        let schema = database.schema
        let logger = database.logger
        do {
            return try await database.transaction { connection in
                // Migrations (and waiting for another replica's) may take longer than the
                // services' statement timeout (CHRONIR_DB_STATEMENT_TIMEOUT).
                try await connection.query("SET LOCAL statement_timeout = 0", logger: logger)
                let lockKey = "chronir.migrations.\(schema)"
                try await connection.lockUntilCommit(lockKey, logger: logger)
                // A role that owns its schema but may not create schemas skips the CREATE.
                let exists = try await connection.query("SELECT 1 FROM pg_namespace WHERE nspname = \(schema)", logger: logger).first(Int32.self) != nil
                if !exists {
                    try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \"\(schema)\""), logger: logger)
                }
                try await connection.query(PostgresQuery(unsafeSQL: """
                    CREATE TABLE IF NOT EXISTS "\(schema)".schema_migrations (
                        version integer PRIMARY KEY,
                        name text NOT NULL,
                        checksum text NOT NULL,
                        applied_at timestamptz NOT NULL DEFAULT now()
                    )
                    """), logger: logger)
                var applied: [Int: String] = [:]
                let rows = try await connection.query(PostgresQuery(unsafeSQL: "SELECT version, checksum FROM \"\(schema)\".schema_migrations"), logger: logger)
                for try await (version, checksum) in rows.decode((Int, String).self) { applied[version] = checksum }
                // A database a newer release migrated: this build would run against tables it
                // does not know. Refuse to start instead (roll forward, or restore a backup).
                if let newest = applied.keys.max(), newest > (versions.last ?? 0) {
                    throw Failure(description: """
                        schema \(schema) is at migration \(newest), newer than this build knows (\(versions.last ?? 0)): \
                        a newer release migrated this database; run that release or a later one
                        """)
                }
                var done: [Int] = []
                for migration in migrations {
                    if let checksum = applied[migration.version] {
                        if checksum != migration.checksum {
                            throw Failure(description: "migration \(migration.version) (\(migration.name)) of schema \(schema) was changed after it was applied")
                        }
                        continue
                    }
                    for statement in migration.statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.query("""
                        INSERT INTO schema_migrations (version, name, checksum) VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                        """, logger: logger)
                    done.append(migration.version)
                }
                if !done.isEmpty { logger.info("applied migrations", metadata: ["schema": "\(schema)", "versions": "\(done)"]) }
                return done
            }
        } catch let error as PSQLError {
            throw Failure(description: "migrating schema \(schema) failed: \(error.serverInfo?[.message] ?? String(reflecting: error))")
        }
    }
}
