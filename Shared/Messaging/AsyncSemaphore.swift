import DequeModule
import Synchronization

/// A counting semaphore for async code: bounds how much work runs at once.
public final class AsyncSemaphore: Sendable {
    private struct State {
        var available: Int
        var waiters = Deque<CheckedContinuation<Void, Never>>()
    }

    private let state: Mutex<State>

    public init(_ permits: Int) {
        state = Mutex(State(available: permits))
    }

    /// Takes a permit, waiting for one if none is free.
    public func acquire() async {
        let got = state.withLock { s -> Bool in
            if s.available > 0 {
                s.available -= 1
                return true
            }
            return false
        }
        if got { return }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.available > 0 {
                    s.available -= 1
                    return true
                }
                s.waiters.append(c)
                return false
            }
            if now { c.resume() }
        }
    }

    /// Returns a permit, waking one waiter if any.
    public func release() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if let w = s.waiters.popFirst() { return w }
            s.available += 1
            return nil
        }
        waiter?.resume()
    }
}
