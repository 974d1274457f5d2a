import DequeModule
import Foundation
import Synchronization

/// Remembers the replies to requests that carried an idempotency key, so a retried request
/// gets the first answer instead of running twice. A retry that arrives while the first is
/// still running waits for it. Bounded in size and age; durable idempotency (a client id for
/// an alarm, one completion per occurrence) lives in the database, this only covers retries.
final class IdempotencyCache: Sendable {
    private enum Entry {
        case running([CheckedContinuation<Data?, Never>])
        case done(Data?, expires: ContinuousClock.Instant)
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var order = Deque<String>()
    }

    private let state = Mutex(State())
    private let capacity: Int
    private let ttl: Duration
    private let clock = ContinuousClock()

    init(capacity: Int = 10_000, ttl: Duration = .seconds(600)) {
        self.capacity = capacity
        self.ttl = ttl
    }

    enum Claim {
        /// Run the request, then call ``finish(_:reply:)``.
        case run
        /// Already answered (or answered while waiting): send this reply frame.
        case replay(Data?)
    }

    /// Claims `key`: the first caller runs the request, later callers get its reply.
    func claim(_ key: String) async -> Claim {
        enum Step { case run, replay(Data?), wait }
        let now = clock.now
        let step: Step = state.withLock { s in
            switch s.entries[key] {
            case .none:
                s.entries[key] = .running([])
                s.order.append(key)
                while s.order.count > capacity, let old = s.order.popFirst() {
                    if case .done = s.entries[old] { s.entries[old] = nil } else { s.order.append(old); break }
                }
                return .run
            case .done(let reply, let expires) where expires > now:
                return .replay(reply)
            case .done:
                s.entries[key] = .running([])
                return .run
            case .running:
                return .wait
            }
        }
        switch step {
        case .run: return .run
        case .replay(let r): return .replay(r)
        case .wait:
            let reply = await withCheckedContinuation { (c: CheckedContinuation<Data?, Never>) in
                let immediate: Data?? = state.withLock { s in
                    switch s.entries[key] {
                    case .running(var waiters):
                        waiters.append(c)
                        s.entries[key] = .running(waiters)
                        return nil
                    case .done(let reply, _):
                        return .some(reply)
                    case .none:
                        return .some(nil)
                    }
                }
                if let r = immediate { c.resume(returning: r) }
            }
            return .replay(reply)
        }
    }

    /// Records the reply of a claimed key and wakes the callers waiting for it.
    func finish(_ key: String, reply: Data?) {
        let waiters = state.withLock { s -> [CheckedContinuation<Data?, Never>] in
            var w: [CheckedContinuation<Data?, Never>] = []
            if case .running(let list) = s.entries[key] { w = list }
            s.entries[key] = .done(reply, expires: clock.now + ttl)
            return w
        }
        for w in waiters { w.resume(returning: reply) }
    }
}
