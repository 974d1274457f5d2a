import Contracts
import Foundation

/// Every write of an existing alarm, as one transition. A rule (an edit, a mark, a snooze, the
/// missed window's advance, a fire, a withdrawn fire) changes a copy of the row; this decides
/// what is written: the snooze of an occurrence the alarm moved past goes
/// (``AlarmLifecycle/clearSnoozeIfMovedOn(_:from:)``), the version goes up by exactly one, and
/// `updatedAt` is the write's time. Devices and the other services order an alarm's states by
/// that version, so no write may skip it or bump it twice. The shell locks the row, asks the
/// rule and this, and writes the answer with its event in one transaction.
public enum AlarmWrite {
    /// `edited`, a copy of `before` changed by one rule, as it is written at `at`: always a new
    /// version (a mark is recorded even when the alarm's own fields stay as they were, and its
    /// event carries the version).
    public static func written(_ edited: Alarm, from before: Alarm, at: Date) -> Alarm {
        var n = edited
        AlarmLifecycle.clearSnoozeIfMovedOn(&n, from: before)
        n.version = before.version + 1
        n.updatedAt = at
        return n
    }

    /// ``written(_:from:at:)``, or nil when `edited` changes nothing of `before` (an edit that
    /// sets what is there already writes nothing and sends no event).
    public static func revised(_ edited: Alarm, from before: Alarm, at: Date) -> Alarm? {
        var n = edited
        AlarmLifecycle.clearSnoozeIfMovedOn(&n, from: before)
        guard n != before else { return nil }
        return written(n, from: before, at: at)
    }

    /// `date` to the nearest millisecond since 1970: the resolution of the instants events carry
    /// (`ISOTime`), at which a date that went through PostgreSQL (whole microseconds, cut, not
    /// rounded) and the same date from an event are equal.
    public static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}

extension AlarmLifecycle {
    /// `alarm` snoozed until `refire`, the `count`-th snooze of its pending occurrence, at `at`.
    public static func snoozed(_ alarm: Alarm, until refire: Date, count: Int, at: Date) -> Alarm {
        var n = alarm
        n.snoozedUntil = refire
        n.snoozeCount = count
        return AlarmWrite.written(n, from: alarm, at: at)
    }

    /// `alarm` once its occurrence at `occurrence` passed the missed window unmarked, at `now`:
    /// moved on as by a mark (``advanced(_:past:now:)``), always a new version (the miss is
    /// recorded with it).
    public static func missed(_ alarm: Alarm, occurrence: Date, now: Date) throws -> Alarm {
        AlarmWrite.written(try advanced(alarm, past: occurrence, now: now), from: alarm, at: now)
    }

    /// `alarm` after it rang at `firedAt` (the fire's due instant, or when it fired if later),
    /// written at `at`; nil when nothing changes: a deleted alarm, or a fire no later than the
    /// one it shows (fires of one alarm may arrive out of order, and the latest wins).
    ///
    /// Instants are compared to the millisecond (``AlarmWrite/milliseconds(_:)``): events carry
    /// milliseconds, and a date read back from PostgreSQL is cut to whole microseconds, so the
    /// same fire read from the row and from the event may differ by a fraction of one.
    public static func fired(_ alarm: Alarm, at firedAt: Date, writtenAt at: Date) -> Alarm? {
        guard alarm.deletedAt == nil,
              alarm.lastFiredDate.map({ AlarmWrite.milliseconds($0) < AlarmWrite.milliseconds(firedAt) }) ?? true else { return nil }
        var n = alarm
        n.lastFiredDate = firedAt
        return AlarmWrite.written(n, from: alarm, at: at)
    }

    /// `alarm` after the fire due at `dueAt`, announced ahead, was withdrawn before it rang: its
    /// `lastFiredDate` goes back to `previous`; nil when it no longer shows that fire (a later
    /// one came) or the alarm is deleted.
    /// Compared to the millisecond, as ``fired(_:at:writtenAt:)``.
    public static func fireWithdrawn(_ alarm: Alarm, dueAt: Date, previous: Date?, writtenAt at: Date) -> Alarm? {
        guard alarm.deletedAt == nil, let shown = alarm.lastFiredDate,
              AlarmWrite.milliseconds(shown) == AlarmWrite.milliseconds(dueAt) else { return nil }
        var n = alarm
        n.lastFiredDate = previous
        return AlarmWrite.written(n, from: alarm, at: at)
    }
}
