import DequeModule
import Synchronization

/// A bounded single-consumer hand-off from a socket thread to async code.
///
/// The socket thread `push`es; when the mailbox holds `capacity` messages it stops reading
/// from libzmq (so libzmq's high-water mark pushes back on the peer) until the consumer has
/// drained it below half, at which point `onDrained` wakes the socket thread.
final class Mailbox<Element: Sendable>: Sendable {
    private struct State {
        var buffer = Deque<Element>()
        var waiter: CheckedContinuation<Element?, Never>? = nil
        var finished = false
        var throttled = false
    }

    private let state = Mutex(State())
    let capacity: Int
    private let onDrained: @Sendable () -> Void

    init(capacity: Int, onDrained: @escaping @Sendable () -> Void) {
        self.capacity = capacity
        self.onDrained = onDrained
    }

    /// Called by the socket thread. Returns false when the mailbox is full (keep reading off).
    @discardableResult
    func push(_ element: Element) -> Bool {
        let (waiter, hasRoom): (CheckedContinuation<Element?, Never>?, Bool) = state.withLock { s in
            if s.finished { return (nil, true) }
            if let w = s.waiter {
                s.waiter = nil
                return (w, true)
            }
            s.buffer.append(element)
            if s.buffer.count >= capacity { s.throttled = true }
            return (nil, !s.throttled)
        }
        waiter?.resume(returning: element)
        return hasRoom
    }

    /// Whether the socket thread should read more now.
    var hasRoom: Bool { state.withLock { !$0.throttled } }

    func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<Element?, Never>? in
            s.finished = true
            let w = s.waiter
            s.waiter = nil
            return w
        }
        waiter?.resume(returning: nil)
    }

    /// The next element, or nil once finished and drained. Single consumer.
    func next() async -> Element? {
        switch take(registering: nil) {
        case .element(let e): return e
        case .finished: return nil
        case .empty: break
        }
        return await withCheckedContinuation { (c: CheckedContinuation<Element?, Never>) in
            switch take(registering: c) {
            case .element(let e): c.resume(returning: e)
            case .finished: c.resume(returning: nil)
            case .empty: break  // registered; push or finish resumes it
            }
        }
    }

    private enum Take { case element(Element), finished, empty }

    private func take(registering waiter: CheckedContinuation<Element?, Never>?) -> Take {
        let (result, wake): (Take, Bool) = state.withLock { s in
            guard let e = s.buffer.popFirst() else {
                if s.finished { return (.finished, false) }
                if let w = waiter { s.waiter = w }
                return (.empty, false)
            }
            var wake = false
            if s.throttled && s.buffer.count <= capacity / 2 {
                s.throttled = false
                wake = true
            }
            return (.element(e), wake)
        }
        if wake { onDrained() }
        return result
    }
}

/// The messages a ``SocketActor`` receives, as an async sequence (single consumer).
public struct SocketMessages: AsyncSequence, Sendable {
    public typealias Element = ReceivedMessage
    let mailbox: Mailbox<ReceivedMessage>

    public struct AsyncIterator: AsyncIteratorProtocol {
        let mailbox: Mailbox<ReceivedMessage>
        public mutating func next() async -> ReceivedMessage? { await mailbox.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(mailbox: mailbox) }
}
