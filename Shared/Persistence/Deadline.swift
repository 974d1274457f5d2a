import Synchronization

/// An operation that outlived its deadline.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    public let limit: Duration
    public var description: String { "no answer within \(limit)" }
}

/// Runs `operation`, giving up after `limit`: the operation is cancelled and left to end on its
/// own, and this throws ``DeadlineExceeded`` at once.
///
/// For calls that a network partition can hang with no error (a query on a connection whose
/// packets vanish: PostgreSQL and the client both wait for the other until TCP gives up,
/// minutes later). Cancellation does not stop a query already sent; the connection is
/// abandoned with it and fails when the network returns.
public func withDeadline<T: Sendable>(_ limit: Duration, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let outcome = DeadlineOutcome<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
            outcome.install(c)
            let work = Task {
                do { outcome.finish(.success(try await operation())) } catch { outcome.finish(.failure(error)) }
            }
            outcome.started(work)
            // Cancelled once the operation answers, so no timer outlives its call (a relay
            // calls this for every batch).
            outcome.timing(Task {
                guard (try? await Task.sleep(for: limit)) != nil else { return }
                outcome.finish(.failure(DeadlineExceeded(limit: limit)))
            })
        }
    } onCancel: {
        // The caller was cancelled: answer at once, as a cancelled call would.
        outcome.finish(.failure(CancellationError()))
    }
}

private final class DeadlineOutcome<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var done = false
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
    }
    private let state = Mutex(State())

    func install(_ c: CheckedContinuation<T, any Error>) {
        let early = state.withLock { s -> Bool in
            if s.done { return true }
            s.continuation = c
            return false
        }
        // Cancelled before the continuation existed.
        if early { c.resume(throwing: CancellationError()) }
    }

    func started(_ work: Task<Void, Never>) {
        let cancel = state.withLock { s -> Bool in
            s.work = work
            return s.done
        }
        if cancel { work.cancel() }
    }

    func timing(_ timer: Task<Void, Never>) {
        let cancel = state.withLock { s -> Bool in
            s.timer = timer
            return s.done
        }
        if cancel { timer.cancel() }
    }

    /// Resumes the caller with `result` unless it already was; the operation is cancelled when
    /// it is not what answered, and the timer always.
    func finish(_ result: Result<T, any Error>) {
        let (c, work, timer) = state.withLock { s -> (CheckedContinuation<T, any Error>?, Task<Void, Never>?, Task<Void, Never>?) in
            guard !s.done else { return (nil, nil, nil) }
            s.done = true
            let c = s.continuation
            s.continuation = nil
            return (c, s.work, s.timer)
        }
        c?.resume(with: result)
        if case .failure = result { work?.cancel() }
        timer?.cancel()
    }
}
