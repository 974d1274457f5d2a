import Logging
import ServiceLifecycle
import Synchronization

/// Runs a part of a service so that its cancellation always ends: once cancelled, the part gets
/// `patience` to return, after which `run()` returns anyway and the part's task is left behind
/// (logged as an error, with the part's name).
///
/// A part can be stuck where cancellation does not reach: PostgresNIO 1.33 never answers a
/// statement written on a connection that closed under it (see `Database.ensureOpen`), and a
/// task awaiting it waits forever. Without this, one such task made the ServiceGroup exceed its
/// cancellation limit and crash the process at shutdown (`DatabaseOutageTests`). The process is
/// about to exit then, so leaving the stuck task costs nothing.
struct AbandoningService: Service {
    let part: any Service
    let name: String
    let patience: Duration
    let logger: Logger

    func run() async throws {
        // An unstructured task inherits the task locals, graceful shutdown included; cancellation
        // is passed on by hand.
        let part = self.part
        let task = Task { try await part.run() }
        let outcome = Outcome()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                outcome.set(c)
                Task {
                    do {
                        try await task.value
                        outcome.finish(.success(()))
                    } catch {
                        outcome.finish(.failure(error))
                    }
                }
            }
        } onCancel: {
            task.cancel()
            let (name, patience, logger) = (name, patience, logger)
            Task {
                try? await Task.sleep(for: patience)
                if outcome.finish(.failure(CancellationError())) {
                    logger.error("a part did not stop within its time after cancellation; left behind", metadata: ["part": "\(name)"])
                }
            }
        }
    }

    /// The continuation, resumed once: by the part's end or by the patience running out.
    private final class Outcome: Sendable {
        private let state = Mutex<(continuation: CheckedContinuation<Void, any Error>?, result: Result<Void, any Error>?)>((nil, nil))

        func set(_ c: CheckedContinuation<Void, any Error>) {
            let ready = state.withLock { s -> Result<Void, any Error>? in
                if let r = s.result { return r }
                s.continuation = c
                return nil
            }
            if let ready { c.resume(with: ready) }
        }

        /// Resumes the waiter with `result` unless it was resumed already; true when this did.
        @discardableResult
        func finish(_ result: Result<Void, any Error>) -> Bool {
            let c = state.withLock { s -> CheckedContinuation<Void, any Error>?? in
                if s.result != nil { return .none }
                s.result = result
                let c = s.continuation
                s.continuation = nil
                return .some(c)
            }
            switch c {
            case .none: return false
            case .some(let waiter): waiter?.resume(with: result); return true
            }
        }
    }
}
