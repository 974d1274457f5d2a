import Synchronization

/// Work that may run only once the transaction it belongs to has committed.
///
/// ``Database/transaction(isolation:_:)`` binds a fresh `CommitHooks` to ``current`` for the
/// time of its body and runs what was registered once `COMMIT` returned without an error. A
/// body that throws, a failed or unanswered `COMMIT`, or a retried attempt drops them. (A body
/// that swallowed a failed statement leaves an aborted transaction, which PostgreSQL answers
/// `COMMIT` with a rollback and no error: hooks suit work that is harmless then, like filling a
/// cache.) Hooks must be quick; they run on the committing task, in the order they were added.
public final class CommitHooks: Sendable {
    /// The hooks of the transaction the current task is in, if it runs inside
    /// ``Database/transaction(isolation:_:)``.
    @TaskLocal public static var current: CommitHooks?

    private let hooks = Mutex<[@Sendable () -> Void]>([])

    public init() {}

    /// Runs `hook` after the commit.
    public func afterCommit(_ hook: @escaping @Sendable () -> Void) {
        hooks.withLock { $0.append(hook) }
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
