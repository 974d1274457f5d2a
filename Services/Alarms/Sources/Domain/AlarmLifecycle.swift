import Contracts
import Foundation

/// The alarm's own transitions besides sharing (`AlarmSharing`) and patches
/// (`Domain/AlarmPatching.swift`): pure, no I/O; `AlarmChanges.revise` writes what they answer.
enum AlarmLifecycle {
    /// Soft-deleted at `now`: switched off, kept for the feed's tombstones.
    static func deleted(_ alarm: Alarm, at now: Date) -> Alarm {
        var n = alarm
        n.deletedAt = now
        n.isActive = false
        return n
    }

    /// Moved past `occurrence` (it was marked, or its window passed) at `now`: when that was the
    /// pending occurrence, the next one after both (an alarm with none left is switched off);
    /// an older occurrence leaves the pending one alone.
    static func advanced(_ alarm: Alarm, past occurrence: Date, now: Date) throws -> Alarm {
        guard let pending = alarm.nextFireDate, occurrence >= pending else { return alarm }
        var n = alarm
        n.nextFireDate = try AlarmRules.compile(alarm.schedule).next(after: max(occurrence, now))
        if n.nextFireDate == nil { n.isActive = false }
        return n
    }
}
