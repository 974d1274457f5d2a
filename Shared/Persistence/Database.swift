import Foundation
import Logging
import NIOPosix
import PostgresNIO
import Wire
import ServiceLifecycle
import Synchronization

/// A service's connection pool to its own schema. Run it in the service group before
/// anything that queries; close it last.
public final class Database: Service, Sendable {
    /// The configuration in use.
    public let config: DatabaseConfig
    /// The pool.
    public let client: PostgresClient
    /// The logger queries log to.
    public let logger: Logger
    /// Whether PostgreSQL answers (kept current by ``probeAvailability(interval:timeout:)``).
    public let availability = DatabaseAvailability()

    public init(config: DatabaseConfig, logger: Logger, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        self.config = config
        self.logger = logger
        self.client = PostgresClient(configuration: try config.clientConfiguration(), eventLoopGroup: eventLoopGroup,
                                     backgroundLogger: logger)
    }

    /// The schema this service owns.
    public var schema: String { config.schema }

    /// Runs the pool until cancelled or graceful shutdown.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await self.client.run()
        }
    }

    /// Runs one query outside a transaction.
    @discardableResult
    public func query(_ query: PostgresQuery, file: String = #fileID, line: Int = #line) async throws -> PostgresRowSequence {
        guard availability.isUp else { throw DatabaseUnavailable() }
        return try await client.query(query, logger: logger, file: file, line: line)
    }

    /// Transaction isolation levels.
    public enum Isolation: String, Sendable {
        case readCommitted = "READ COMMITTED"
        case repeatableRead = "REPEATABLE READ"
        case serializable = "SERIALIZABLE"
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// A transaction whose connection closes under it ends within ``closedConnectionGrace``
    /// (``untilClosed(_:grace:poll:_:)``), so `body` runs in a task of its own and is `@Sendable`.
    public func transaction<T: Sendable>(isolation: Isolation = .readCommitted,
                                         _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        // A deadlock or serialization failure rolls the whole transaction back, so it is safe to
        // run again: up to 3 tries, after a short random pause. So is a connection lost before
        // COMMIT was sent (the server ended its backend, a restart, a pooled connection found
        // closed): nothing of it committed, and the next try takes another connection. A loss
        // during COMMIT is not retried: whether it committed is not known.
        guard availability.isUp else { throw DatabaseUnavailable() }
        var attempt = 1
        var lastAttempt: CommitHooks?
        while true {
            // After-commit work of this attempt only (see ``CommitHooks``).
            let hooks = CommitHooks(readCommitted: isolation == .readCommitted, previous: lastAttempt)
            lastAttempt = hooks
            let progress = TransactionProgress()
            do {
                // Marked, so a remote call made inside it is seen (``TransactionScope``).
                let value = try await CommitHooks.$current.withValue(hooks) { try await TransactionScope.$holder.withValue("a database transaction") {
                    try await client.withConnection { connection in
                        do {
                            return try await untilClosed(connection, grace: Self.closedConnectionGrace) { [logger] in
                                try Self.ensureOpen(connection)
                                try await connection.query(PostgresQuery(unsafeSQL: "BEGIN ISOLATION LEVEL \(isolation.rawValue)"), logger: logger)
                                do {
                                    let value = try await body(connection)
                                    try Self.ensureOpen(connection)
                                    try await hooks.runFinalStatements(on: connection, logger: logger)
                                    progress.commitSent()
                                    try await connection.query("COMMIT", logger: logger)
                                    return value
                                } catch {
                                    // A closed connection has no transaction left to roll back (the server
                                    // ended it), and a statement sent on it would never be answered. One
                                    // still open is rolled back whatever the error says (a lost connection
                                    // elsewhere, a nested transaction's): it goes back to the pool.
                                    if !connection.isClosed {
                                        _ = try? await connection.query("ROLLBACK", logger: logger)
                                    }
                                    throw error
                                }
                            }
                        } catch {
                            // Run again only when this very connection went away before COMMIT was
                            // sent (an error that says "connection lost" about another one is not).
                            if !progress.isCommitSent && connection.isClosed {
                                throw ConnectionLostBeforeCommit(underlying: error)
                            }
                            throw error
                        }
                    }
                } }
                hooks.run()
                return value
            } catch let error as PSQLError where attempt < 3 && Self.isRetryable(error) {
                logger.info("transaction retried", metadata: ["attempt": "\(attempt)", "sqlState": "\(error.serverInfo?[.sqlState] ?? "")"])
                attempt += 1
                try await Task.sleep(for: .milliseconds(Int.random(in: 5...50)))
            } catch let conflict as TransactionConflict where attempt < 3 {
                logger.info("transaction retried", metadata: ["attempt": "\(attempt)", "conflict": "\(conflict.reason)"])
                attempt += 1
                try await Task.sleep(for: .milliseconds(Int.random(in: 5...50)))
            } catch let lost as ConnectionLostBeforeCommit {
                guard attempt < 3, availability.isUp else { throw lost.underlying }
                logger.info("transaction retried on another connection: its connection was lost before COMMIT",
                            metadata: ["attempt": "\(attempt)", "error": "\(String(reflecting: lost.underlying))"])
                attempt += 1
                try await Task.sleep(for: .milliseconds(Int.random(in: 20...100)))
            }
        }
    }

    /// How long a transaction whose connection closed may take to end by itself before it is
    /// abandoned: a statement in flight fails at once when the connection closes; only one
    /// written after the close never answers.
    static let closedConnectionGrace = Duration.seconds(1)

    /// A transaction's connection went away before its COMMIT was sent (nothing of it can have
    /// committed): ``transaction(isolation:_:)`` runs it again on another connection, and
    /// throws `underlying` when it gives up.
    struct ConnectionLostBeforeCommit: Error {
        let underlying: any Error
    }

    /// Refuses to send a statement on a connection whose channel has closed.
    ///
    /// PostgresNIO 1.33 writes a statement to the channel without a write promise, so on a
    /// closed channel the write fails silently and the statement's answer never comes: the
    /// caller waits forever, cancellation included. After a PostgreSQL restart, a pool
    /// connection that closed between two statements of a transaction hung its task that way
    /// (the stalled outbox relays and delivery loop of `DatabaseOutageTests`, and the shutdowns
    /// they held up). Checking first leaves only the instant between the check and the write,
    /// and a statement written between two checks; ``untilClosed(_:grace:poll:_:)`` ends
    /// those.
    static func ensureOpen(_ connection: PostgresConnection) throws {
        if connection.isClosed { throw DatabaseUnavailable() }
    }

    /// Deadlock detected (40P01) or serialization failure (40001).
    static func isRetryable(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40P01" || state == "40001"
    }

    /// Waits until the database answers (at start, PostgreSQL may still be booting).
    public func waitUntilReachable(timeout: Duration = .seconds(60)) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var delay = Duration.milliseconds(100)
        while true {
            do {
                try await query("SELECT 1")
                return
            } catch {
                if clock.now >= deadline { throw error }
                logger.info("waiting for PostgreSQL", metadata: ["database": "\(config.redacted)", "error": "\(String(reflecting: error))"])
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
            }
        }
    }
}

/// Whether a transaction's COMMIT went out (a loss after it is not retried: whether it
/// committed is not known). Shared with the task the transaction runs in.
private final class TransactionProgress: Sendable {
    private let sent = Mutex(false)
    func commitSent() { sent.withLock { $0 = true } }
    var isCommitSent: Bool { sent.withLock { $0 } }
}
