import Synchronization

/// Lets one loop sleep until either someone calls ``signal()`` or a timeout passes.
/// Signals that arrive while the loop is busy are remembered (once).
public final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>? = nil
    }

    private let state = Mutex(State())

    public init() {}

    /// Wakes the waiting loop, or makes its next wait return at once.
    public func signal() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if let w = s.waiter {
                s.waiter = nil
                return w
            }
            s.pending = true
            return nil
        }
        waiter?.resume()
    }

    /// Whether a signal arrived since the last wait or take, without waiting (and forgets it).
    public func take() -> Bool {
        state.withLock { s in
            defer { s.pending = false }
            return s.pending
        }
    }

    /// Waits for a signal or `timeout`, whichever comes first. Returns early on cancellation.
    public func wait(timeout: Duration) async {
        if state.withLock({ s in
            if s.pending {
                s.pending = false
                return true
            }
            return false
        }) { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await Task.sleep(for: timeout)
                    self.release()
                } catch {}
            }
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                        let now = self.state.withLock { s -> Bool in
                            if s.pending {
                                s.pending = false
                                return true
                            }
                            s.waiter = c
                            return false
                        }
                        if now { c.resume() } else if Task.isCancelled { self.release() }
                    }
                } onCancel: {
                    self.release()
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// Resumes the waiter without leaving a pending signal behind (timeouts, cancellation).
    private func release() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            let w = s.waiter
            s.waiter = nil
            return w
        }
        waiter?.resume()
    }
}
