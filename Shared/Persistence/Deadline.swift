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
    return try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
        outcome.install(c)
        let work = Task {
            do { outcome.finish(.success(try await operation())) } catch { outcome.finish(.failure(error)) }
        }
        Task {
            try? await Task.sleep(for: limit)
            if outcome.finish(.failure(DeadlineExceeded(limit: limit))) { work.cancel() }
        }
    }
}

private final class DeadlineOutcome<T: Sendable>: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<T, any Error>?, done: Bool)>((nil, false))

    func install(_ c: CheckedContinuation<T, any Error>) { state.withLock { $0.continuation = c } }

    /// Resumes the caller with `result` unless it already was; true when this call did.
    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        let c = state.withLock { s -> CheckedContinuation<T, any Error>? in
            guard !s.done else { return nil }
            s.done = true
            let c = s.continuation
            s.continuation = nil
            return c
        }
        c?.resume(with: result)
        return c != nil
    }
}
