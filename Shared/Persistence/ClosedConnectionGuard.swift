import PostgresNIO
import Synchronization

/// The connection a transaction ran on closed, and the transaction did not end by itself
/// within the grace period after: it was abandoned (nothing of it was committed by this
/// client's knowledge; the server rolled it back when it closed the connection).
public struct ConnectionClosedUnderTransaction: Error, CustomStringConvertible {
    public var description: String { "the database connection closed during the transaction" }
    public init() {}
}

/// Runs `operation` (the statements of one transaction on `connection`) and answers with its
/// result, or, when `connection` closes and `operation` has not ended `grace` later, with
/// ``ConnectionClosedUnderTransaction`` at once, leaving `operation` behind.
///
/// Why: PostgresNIO 1.33 writes each statement to the channel without a write promise. A
/// statement written after the connection closed (its backend terminated while the
/// transaction was between two statements: doing Swift work, or waiting on another service)
/// is dropped by the closed channel and its answer never comes — the caller waits forever,
/// cancellation included. A `GroupCommit` runner stuck so keeps its slot for good: after
/// every connection of alarms was terminated, one replica answered no completion again
/// (the soak of CI stop 81). The close itself is reliable, so it bounds the wait.
///
/// Cancellation of the caller is passed on to `operation` and waited for: a transaction that
/// is still talking to a live connection must end before the connection goes back to the pool.
/// Only a closed connection, which the pool discards, is ever left behind.
func untilClosed<T: Sendable>(_ connection: PostgresConnection, grace: Duration, poll: Duration = .milliseconds(250),
                              _ operation: sending @escaping () async throws -> T) async throws -> T {
    let outcome = ClosedConnectionOutcome<T>()
    let work = Task { () async -> Void in
        do { outcome.finish(.success(try await operation())) } catch { outcome.finish(.failure(error)) }
    }
    // Polled rather than a callback on `closeFuture`: a pooled connection lives for hours and
    // its close future would gather one callback per transaction until then.
    outcome.watch(Task {
        while (try? await Task.sleep(for: poll)) != nil {
            guard connection.isClosed else { continue }
            guard (try? await Task.sleep(for: grace)) != nil else { return }
            outcome.finish(.failure(ConnectionClosedUnderTransaction()))
            // What it still does (a call to another service) stops at its next check; a
            // statement it waits on never answers, and the task stays behind with it.
            work.cancel()
            return
        }
    })
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
            outcome.install(c)
        }
    } onCancel: {
        work.cancel()
    }
}

private final class ClosedConnectionOutcome<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var result: Result<T, any Error>?
        var watcher: Task<Void, Never>?
    }
    private let state = Mutex(State())

    func install(_ c: CheckedContinuation<T, any Error>) {
        let ready = state.withLock { s -> Result<T, any Error>? in
            guard let r = s.result else {
                s.continuation = c
                return nil
            }
            return r
        }
        if let ready { c.resume(with: ready) }
    }

    func watch(_ watcher: Task<Void, Never>) {
        let done = state.withLock { s -> Bool in
            s.watcher = watcher
            return s.result != nil
        }
        if done { watcher.cancel() }
    }

    /// Answers with `result` unless an answer went already; stops the watcher.
    func finish(_ result: Result<T, any Error>) {
        let (c, watcher) = state.withLock { s -> (CheckedContinuation<T, any Error>?, Task<Void, Never>?) in
            guard s.result == nil else { return (nil, nil) }
            s.result = result
            let c = s.continuation
            s.continuation = nil
            return (c, s.watcher)
        }
        watcher?.cancel()
        c?.resume(with: result)
    }
}
