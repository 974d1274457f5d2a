import Synchronization

/// A counting semaphore for async code: bounds how much work runs at once.
public final class AsyncSemaphore: Sendable {
    private struct State {
        var available: Int
        var waiters: [(id: Int, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextID = 0
    }

    private let state: Mutex<State>

    public init(_ permits: Int) {
        state = Mutex(State(available: permits))
    }

    /// Takes a permit, waiting for one if none is free. Answers false, holding no permit, when
    /// the calling task is cancelled first (a shutdown must not wait behind stuck work).
    @discardableResult
    public func acquire() async -> Bool {
        if Task.isCancelled { return false }
        let id = state.withLock { s -> Int? in
            if s.available > 0 {
                s.available -= 1
                return nil
            }
            s.nextID += 1
            return s.nextID
        }
        guard let id else { return true }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                let now = state.withLock { s -> Bool? in
                    if s.available > 0 {
                        s.available -= 1
                        return true
                    }
                    if Task.isCancelled { return false }
                    s.waiters.append((id, c))
                    return nil
                }
                if let now { c.resume(returning: now) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<Bool, Never>? in
                guard let k = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return s.waiters.remove(at: k).continuation
            }
            waiter?.resume(returning: false)
        }
    }

    /// Returns a permit, waking one waiter if any.
    public func release() {
        let waiter = state.withLock { s -> CheckedContinuation<Bool, Never>? in
            if !s.waiters.isEmpty { return s.waiters.removeFirst().continuation }
            s.available += 1
            return nil
        }
        waiter?.resume(returning: true)
    }
}
