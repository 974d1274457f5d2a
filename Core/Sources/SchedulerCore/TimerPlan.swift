import Foundation

/// One timer to write for an occurrence: its kind, its due instant and, for a warning, how many
/// minutes before the occurrence it rings.
public struct PlannedTimer: Equatable, Sendable {
    public var kind: TimerKind
    public var due: Date
    public var offsetMinutes: Int32

    public init(kind: TimerKind, due: Date, offsetMinutes: Int32 = 0) {
        self.kind = kind
        self.due = due
        self.offsetMinutes = offsetMinutes
    }
}

/// Which timers an alarm's pending occurrence needs (the scheduler writes them; the wheel fires them).
public enum TimerPlan {
    /// The timers of a pending occurrence at `occurrence`: the fire; the missed check
    /// `missedWindow` seconds later; and one warning per offset (minutes before the occurrence)
    /// whose instant is still after `now` — a warning already past is not written, so an alarm
    /// created or edited late never rings a stale warning.
    public static func timers(occurrence: Date, offsets: [Int32], missedWindow: TimeInterval, now: Date) -> [PlannedTimer] {
        var out = [PlannedTimer(kind: .fire, due: occurrence), PlannedTimer(kind: .missed, due: occurrence.addingTimeInterval(missedWindow))]
        for o in offsets {
            let at = occurrence.addingTimeInterval(-Double(o) * 60)
            if at > now { out.append(PlannedTimer(kind: .pre, due: at, offsetMinutes: o)) }
        }
        return out
    }

    /// The timers of a snooze: the re-fire at `refireAt`, and the missed check moved to one
    /// window after it (it replaces the occurrence's earlier missed check and re-fire).
    public static func snoozed(refireAt: Date, missedWindow: TimeInterval) -> [PlannedTimer] {
        [PlannedTimer(kind: .snooze, due: refireAt), PlannedTimer(kind: .missed, due: refireAt.addingTimeInterval(missedWindow))]
    }

    /// Seconds from an occurrence until it is missed: the alarm's group's window in minutes when
    /// it has one, else the service's (`CHRONIR_MISSED_WINDOW`).
    public static func missedWindow(groupMinutes: Int?, service: TimeInterval) -> TimeInterval {
        groupMinutes.map { TimeInterval($0) * 60 } ?? service
    }
}
