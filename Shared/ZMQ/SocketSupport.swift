import Foundation
import Synchronization

/// The `eventfd` that wakes a socket thread. Signals after ``close()`` do nothing: a late
/// `wake()` or mailbox drain must not write into a descriptor number the process has since
/// reused (a database connection's socket, say).
final class WakeFD: Sendable {
    let fd: Int32
    private let closed = Mutex(false)

    init(_ fd: Int32) { self.fd = fd }

    func signal() {
        closed.withLock { isClosed in
            guard !isClosed else { return }
            var one: UInt64 = 1
            _ = write(fd, &one, 8)
        }
    }

    func close() {
        closed.withLock { isClosed in
            guard !isClosed else { return }
            isClosed = true
            Glibc.close(fd)
        }
    }
}

/// Counters of one socket.
public final class SocketStats: Sendable {
    /// Messages sent.
    public let sent = Atomic<Int>(0)
    /// Messages received.
    public let received = Atomic<Int>(0)
    /// Messages dropped before sending (queue over limit, or socket closed).
    public let dropped = Atomic<Int>(0)
    /// Messages received with a frame over the size limit.
    public let oversized = Atomic<Int>(0)
    /// libzmq errors.
    public let errors = Atomic<Int>(0)
    /// Of `sent`: messages the caller's thread sent itself (``SocketOptions/callerSends``).
    public let sentByCaller = Atomic<Int>(0)
    /// Addresses connected or disconnected because a peer name resolved differently.
    public let discoveryChanges = Atomic<Int>(0)
}

/// A one-time signal many tasks can wait for.
final class OneShot: Sendable {
    private let state = Mutex<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    var hasFired: Bool { state.withLock { $0.fired } }

    func fire() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.fired = true
            let w = s.waiters
            s.waiters = []
            return w
        }
        for w in waiters { w.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let fired = state.withLock { s -> Bool in
                if s.fired { return true }
                s.waiters.append(c)
                return false
            }
            if fired { c.resume() }
        }
    }
}
