import Logging
import PostgresNIO
import Synchronization

/// Work that may run only once the transaction it belongs to has committed, and statements
/// that must be the transaction's last.
///
/// ``Database/transaction(isolation:_:)`` binds a fresh `CommitHooks` to ``current`` for the
/// time of its body and runs what was registered once `COMMIT` returned without an error. A
/// body that throws, a failed or unanswered `COMMIT`, or a retried attempt drops them. (A body
/// that swallowed a failed statement leaves an aborted transaction, which PostgreSQL answers
/// `COMMIT` with a rollback and no error: hooks suit work that is harmless then, like filling a
/// cache.) Hooks must be quick; they run on the committing task, in the order they were added.
///
/// ``finalStatement(key:_:)`` work runs after the body, just before `COMMIT`, on the
/// transaction's connection: a lock it takes is the last one the transaction takes, so it is
/// held only for the commit and never waited on by a transaction that holds another.
public final class CommitHooks: Sendable {
    /// The hooks of the transaction the current task is in, if it runs inside
    /// ``Database/transaction(isolation:_:)``.
    @TaskLocal public static var current: CommitHooks?

    /// Whether the transaction runs at READ COMMITTED (where a final statement's row lock
    /// waits for another transaction's commit instead of failing to serialize).
    public let readCommitted: Bool

    private let hooks = Mutex<[@Sendable () -> Void]>([])
    private let finals = Mutex<[(key: String, work: any FinalStatement)]>([])
    private let values = Mutex<[String: any Sendable]>([:])

    /// The hooks of the attempt this one retries (``Database/transaction(isolation:_:)`` runs a
    /// body again after a deadlock, a serialization failure or a ``TransactionConflict``), whose
    /// ``value(key:_:)`` objects a retry may learn from (the inbox locks the last attempt wanted).
    public let previous: CommitHooks?

    public init(readCommitted: Bool = true, previous: CommitHooks? = nil) {
        self.readCommitted = readCommitted
        // One attempt back is enough: the chain does not grow with the retries.
        self.previous = previous.map { CommitHooks(dropping: $0) }
    }

    private init(dropping hooks: CommitHooks) {
        readCommitted = hooks.readCommitted
        previous = nil
        values.withLock { $0 = hooks.values.withLock { $0 } }
    }

    /// Runs `hook` after the commit.
    public func afterCommit(_ hook: @escaping @Sendable () -> Void) {
        hooks.withLock { $0.append(hook) }
    }

    /// The final statement registered under `key`, made by `make` the first time: several
    /// parts of one transaction add to one statement (all the events a consumer's batch writes).
    public func finalStatement<W: FinalStatement>(key: String, _ make: () -> W) -> W {
        finals.withLock { f in
            if let existing = f.first(where: { $0.key == key })?.work as? W { return existing }
            let work = make()
            f.append((key, work))
            return work
        }
    }

    /// The object registered under `key` for this attempt of the transaction, made by `make`
    /// the first time: what parts of one transaction must know of each other (the inbox locks
    /// it holds). A retried attempt starts with none.
    public func value<V: AnyObject & Sendable>(key: String, _ make: () -> V) -> V {
        values.withLock { v in
            if let existing = v[key] as? V { return existing }
            let made = make()
            v[key] = made
            return made
        }
    }

    /// The object the attempt this one retries registered under `key`, if any.
    public func previousValue<V: AnyObject & Sendable>(key: String, as type: V.Type = V.self) -> V? {
        previous?.values.withLock { $0[key] as? V }
    }

    /// Runs the final statements, in the order they were first registered (called by
    /// ``Database/transaction(isolation:_:)`` after the body, before `COMMIT`).
    func runFinalStatements(on connection: PostgresConnection, logger: Logger) async throws {
        for (_, work) in finals.withLock({ $0 }) {
            try await work.run(on: connection, hooks: self, logger: logger)
        }
    }

    /// Runs the hooks (once; called after `COMMIT` succeeded).
    func run() {
        for hook in hooks.withLock({ h -> [@Sendable () -> Void] in
            let all = h
            h = []
            return all
        }) {
            hook()
        }
    }
}

/// A statement a transaction runs last, just before `COMMIT` (see
/// ``CommitHooks/finalStatement(key:_:)``).
public protocol FinalStatement: AnyObject, Sendable {
    /// Runs the statement on the transaction's connection; `hooks` takes after-commit work.
    func run(on connection: PostgresConnection, hooks: CommitHooks, logger: Logger) async throws
}
