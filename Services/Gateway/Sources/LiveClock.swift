import Foundation
import Messaging
import Synchronization

/// The live stream's time: the database's clock, read through the notifications service (its
/// `notifications.head` answer carries PostgreSQL's `clock_timestamp()`) and carried between
/// readings by this host's monotonic clock.
///
/// A fire announced ahead waits in the ``LiveRouter`` until its instant, which the scheduler
/// set by the database's clock; a gateway waiting by its own wall clock rang early when that
/// clock was ahead (issue 75). Each reading keeps a lower bound of the database's time — its
/// value less the whole round trip, since it was read at some moment inside it — so a gateway
/// never releases a notification before its instant by the database's clock, and at most one
/// round trip (about a millisecond) after it. Until the first reading, and with a notifications
/// service of an earlier release that does not send the time, the host's wall clock.
final class LiveClock: Sendable {
    /// The database's time less the monotonic clock, in milliseconds.
    private let offset: Atomic<Int64>
    private let measured = Atomic<Bool>(false)
    /// Fault tests only (`CHRONIR_FAILPOINT_CLOCK_AHEAD`): how far ahead this host's clock reads.
    private let ahead: Int64

    init(ahead: Duration = .zero) {
        self.ahead = ahead.wholeMilliseconds
        self.offset = Atomic(wallMilliseconds() + self.ahead - monotonicMilliseconds())
    }

    /// The live stream's now, in milliseconds since the epoch.
    func now() -> Int64 { monotonicMilliseconds() + offset.load(ordering: .relaxed) }

    /// Whether a reading of the database's clock has been taken.
    var isMeasured: Bool { measured.load(ordering: .relaxed) }

    /// How far this host's wall clock (as the failpoint has it) is behind the live stream's now.
    var wallOffsetMilliseconds: Int64 { now() - (wallMilliseconds() + ahead) }

    /// Keeps the reading of the fastest round trip among `samples`.
    func record(_ samples: [Reading]) {
        guard let best = Reading.best(samples) else { return }
        offset.store(best.lowerBound, ordering: .relaxed)
        measured.store(true, ordering: .relaxed)
    }

    /// One reading: the monotonic clock before the question and after the answer, and the
    /// database's time in the answer (all in milliseconds).
    struct Reading: Sendable, Equatable {
        var sent: Int64
        var database: Int64
        var answered: Int64

        /// The database's time less the monotonic clock, as low as it can be: the database read
        /// its clock no later than the answer came back.
        var lowerBound: Int64 { database - answered }

        /// The reading of the shortest round trip (the tightest bound).
        static func best(_ readings: [Reading]) -> Reading? {
            readings.filter { $0.answered >= $0.sent }.min { ($0.answered - $0.sent) < ($1.answered - $1.sent) }
        }
    }
}

/// The host's wall clock in milliseconds since the epoch.
private func wallMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

extension Duration {
    /// Whole milliseconds.
    fileprivate var wholeMilliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
