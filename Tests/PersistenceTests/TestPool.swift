import Logging
import Persistence

/// A pool of `size` connections to `url`'s public schema, logging nowhere.
func testPool(_ url: String, size: Int = 2, statementTimeout: Duration? = nil) throws -> Database {
    var config = try DatabaseConfig.parse(url: url, schema: "public")
    config.poolSize = size
    config.statementTimeout = statementTimeout
    return try Database(config: config, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
}

/// Runs `body` with `db`'s pool running, and stops the pool after it.
func withPool<T: Sendable>(_ db: Database, _ body: (Database) async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await db.client.run() }
        defer { group.cancelAll() }
        return try await body(db)
    }
}
