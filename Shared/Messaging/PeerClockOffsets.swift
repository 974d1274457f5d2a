import Foundation
import Synchronization

/// How far each caller's wall clock is from this server's, learnt from the requests themselves
/// (issue 58): a request's `occurredAt` is stamped by the caller as it sends, so
/// `received − occurredAt` is the caller's offset plus the time in transit and in queues. The
/// smallest such delta over the last minute or two is the offset plus the quickest trip, close
/// to the offset alone. The server moves a caller's `deadline` (written by the caller's clock)
/// onto its own by it, so a caller whose clock is behind is not refused as expired, and one
/// ahead does not have its requests kept past their time.
///
/// Offsets under ``threshold`` are taken as 0: on agreeing clocks nothing changes, and a request
/// that waited in a queue past its deadline is still dropped (the smallest delta of a queue
/// that never empties would otherwise pass for an offset).
public final class PeerClockOffsets: Sendable {
    private struct Window {
        var current: Int64
        var previous: Int64?
        var started: Int64
    }

    private let windows = Mutex<[String: Window]>([:])
    /// Offsets smaller than this (milliseconds) are taken as 0.
    public let threshold: Int64
    /// How long one window lasts (milliseconds); the smallest delta of this one and the last counts.
    public let window: Int64
    /// The most callers remembered (a caller is `<service>/<instance>`; beyond, the table restarts).
    static let maxCallers = 10_000

    public init(threshold: Int64 = 1_000, window: Int64 = 60_000) {
        self.threshold = threshold
        self.window = window
    }

    /// Notes a request of `source` stamped `sentAt` and received at `receivedAt` (ms since the
    /// epoch, this server's clock); returns what to add to its deadline to read it on this clock.
    public func observe(source: String, sentAt: Date, receivedAt: Int64) -> Int64 {
        let delta = receivedAt - Int64((sentAt.timeIntervalSince1970 * 1000).rounded(.down))
        let smallest = windows.withLock { all -> Int64 in
            if all.count >= Self.maxCallers, all[source] == nil { all.removeAll() }
            var w = all[source] ?? Window(current: delta, previous: nil, started: receivedAt)
            if receivedAt - w.started >= window {
                w = Window(current: delta, previous: w.current, started: receivedAt)
            } else {
                w.current = min(w.current, delta)
            }
            all[source] = w
            return min(w.current, w.previous ?? w.current)
        }
        return abs(smallest) >= threshold ? smallest : 0
    }
}
