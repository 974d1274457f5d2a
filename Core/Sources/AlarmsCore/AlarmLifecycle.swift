import Contracts
import Foundation
import Wire

/// The alarm's own transitions besides sharing (`AlarmSharing`) and patches
/// (`AlarmPatching.swift`): pure, no I/O. Each ends in ``AlarmWrite`` (the version and
/// `updatedAt` of every write); `AlarmChanges.revise` writes what they answer.
public enum AlarmLifecycle {
    /// Soft-deleted at `now`: switched off, kept for the feed's tombstones.
    public static func deleted(_ alarm: Alarm, at now: Date) -> Alarm {
        var n = alarm
        n.deletedAt = now
        n.isActive = false
        return n
    }

    /// The occurrence a mark names on `alarm` (`requested`, else the pending one), checked
    /// against its schedule (`CA016` otherwise), and the alarm's next occurrence when marking it
    /// moves the alarm on (the pending occurrence or a later one); `.none` when it only logs
    /// (an earlier occurrence). `now`: when the mark came.
    /// `logged`: whether `requested` already has a log — an occurrence the schedule had then
    /// (before a floating alarm moved zone, or its schedule was edited) is still that occurrence.
    public static func markedOccurrence(_ requested: Date?, on alarm: Alarm, now: Date, logged: (Date) -> Bool = { _ in false })
        throws -> (occurrence: Date, next: Date??) {
        let compiled = try AlarmRules.compile(alarm.schedule)
        guard let occurrence = requested ?? alarm.nextFireDate else {
            throw ServiceError(.validationFailed, "alarm \(alarm.id) has no pending occurrence; give scheduledDate")
        }
        guard logged(occurrence) || compiled.isOccurrence(occurrence) else {
            throw ServiceError(.validationFailed, "scheduledDate \(ISOTime.format(occurrence)) is not an occurrence of this alarm's schedule")
        }
        if let pending = alarm.nextFireDate, occurrence > pending {
            throw ServiceError(.validationFailed, "scheduledDate is later than the alarm's pending occurrence \(ISOTime.format(pending))")
        }
        var next: Date?? = .none
        if let pending = alarm.nextFireDate, occurrence >= pending {
            next = .some(compiled.next(after: max(occurrence, now)))
        }
        return (occurrence, next)
    }

    /// `alarm` after a mark with `status` at `at`: a completion sets `lastCompletedDate`; a mark
    /// that moves it on (`next` from ``markedOccurrence(_:on:now:)``) sets the next occurrence,
    /// switching it off when there is none. Version and `updatedAt` follow.
    /// `lastCompletedDate` only moves forward (a late mark of an older occurrence leaves a newer
    /// one). `changedAt`: when the server recorded it (the version's time).
    public static func marked(_ alarm: Alarm, status: CompletionStatus, at: Date, next: Date??, changedAt: Date? = nil) -> Alarm {
        var n = alarm
        if status == .completed { n.lastCompletedDate = max(at, alarm.lastCompletedDate ?? at) }
        if case .some(let date) = next {
            n.nextFireDate = date
            if date == nil { n.isActive = false }
        }
        return AlarmWrite.written(n, from: alarm, at: changedAt ?? at)
    }

    /// A snooze is of the pending occurrence: when the alarm moves to another one, its snooze
    /// state (`snoozedUntil`, `snoozeCount`) goes.
    public static func clearSnoozeIfMovedOn(_ n: inout Alarm, from before: Alarm) {
        guard n.nextFireDate != before.nextFireDate else { return }
        n.snoozedUntil = nil
        n.snoozeCount = 0
    }

    /// Server clock skew a device's `completedAt` may be ahead by.
    public static let completedAtSkew: TimeInterval = 300

    /// The time a mark is recorded at: the device's `completedAt` when given, checked — not
    /// more than ``completedAtSkew`` after `receivedAt`, not before the occurrence's window
    /// opened (the schedule's occurrence before it, or 400 days before it when there is none
    /// that recent) — else `receivedAt`.
    public static func markTime(_ completedAt: Date?, occurrence: Date, on alarm: Alarm, receivedAt: Date) throws -> Date {
        guard let completedAt else { return receivedAt }
        guard completedAt.timeIntervalSince(receivedAt) <= completedAtSkew else {
            throw ServiceError(.validationFailed, "completedAt \(ISOTime.format(completedAt)) is in the future",
                               details: .object(["field": .string("completedAt")]))
        }
        let span = Date(timeIntervalSince1970: occurrence.timeIntervalSince1970 - 400 * 86_400)..<occurrence
        let opens = try AlarmRules.compile(alarm.schedule).occurrences(in: span).last ?? span.lowerBound
        guard completedAt >= opens else {
            throw ServiceError(.validationFailed,
                               "completedAt \(ISOTime.format(completedAt)) is before this occurrence's window opened (\(ISOTime.format(opens)))",
                               details: .object(["field": .string("completedAt")]))
        }
        return completedAt
    }

    /// Whether a mark at `at` of `occurrence` is on time: within `window` of it — and, for a
    /// time the device gives, sent within ``offlineHorizon`` of it (`receivedAt`): a stated time
    /// is taken as the time of the mark, but an old one cannot rewrite a miss as on time.
    public static func onTime(_ at: Date, occurrence: Date, window: TimeInterval, receivedAt: Date? = nil) -> Bool {
        if let receivedAt, receivedAt.timeIntervalSince(at) > offlineHorizon { return false }
        return at.timeIntervalSince(occurrence) <= window
    }

    /// How long a device may have been offline for a mark it sends late to count on time.
    public static let offlineHorizon: TimeInterval = 72 * 3600

    /// Moved past `occurrence` (it was marked, or its window passed) at `now`: when that was the
    /// pending occurrence, the next one after both (an alarm with none left is switched off);
    /// an older occurrence leaves the pending one alone.
    public static func advanced(_ alarm: Alarm, past occurrence: Date, now: Date) throws -> Alarm {
        guard let pending = alarm.nextFireDate, occurrence >= pending else { return alarm }
        var n = alarm
        n.nextFireDate = try AlarmRules.compile(alarm.schedule).next(after: max(occurrence, now))
        if n.nextFireDate == nil { n.isActive = false }
        clearSnoozeIfMovedOn(&n, from: alarm)
        return n
    }
}
