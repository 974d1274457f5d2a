import DequeModule
import Synchronization

/// An unbounded single-consumer queue for async code, with a non-blocking `takeAvailable`
/// so a consumer can batch whatever has piled up.
public final class AsyncInbox<Element: Sendable>: Sendable {
    private struct State {
        var buffer = Deque<Element>()
        var waiter: CheckedContinuation<Element?, Never>? = nil
        var finished = false
    }

    private let state = Mutex(State())

    public init() {}

    /// Adds an element (dropped once finished).
    public func send(_ element: Element) {
        let waiter = state.withLock { s -> CheckedContinuation<Element?, Never>? in
            if s.finished { return nil }
            if let w = s.waiter {
                s.waiter = nil
                return w
            }
            s.buffer.append(element)
            return nil
        }
        waiter?.resume(returning: element)
    }

    /// Ends the queue: the consumer gets what is buffered, then nil.
    public func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<Element?, Never>? in
            s.finished = true
            let w = s.waiter
            s.waiter = nil
            return w
        }
        waiter?.resume(returning: nil)
    }

    /// The next element, waiting if none; nil once finished and drained.
    public func next() async -> Element? {
        await withCheckedContinuation { (c: CheckedContinuation<Element?, Never>) in
            let ready: Element?? = state.withLock { s in
                if let e = s.buffer.popFirst() { return .some(e) }
                if s.finished { return .some(nil) }
                s.waiter = c
                return nil
            }
            if let r = ready { c.resume(returning: r) }
        }
    }

    /// Up to `max` elements that are already waiting, without waiting.
    public func takeAvailable(max: Int) -> [Element] {
        state.withLock { s in
            var out: [Element] = []
            while out.count < max, let e = s.buffer.popFirst() { out.append(e) }
            return out
        }
    }

    /// How many elements wait.
    public var count: Int { state.withLock { $0.buffer.count } }
}
