import Foundation
import Wire

/// A validated schedule that computes its occurrences.
///
/// Occurrences are the local wall-clock time `timeOfDay` in the schedule's zone, on the days
/// the rule selects, from the local calendar date of `startDate` on, none after `endDate`
/// (inclusive), with RFC 5545 §3.3.5 handling of daylight-saving gaps and overlaps. Pure: no
/// I/O, no allocation on the hot path beyond the result.
public struct CompiledSchedule: Sendable {
    /// The schedule as given.
    public let schedule: Schedule

    enum Rule: Sendable, Equatable {
        case weekly(mask: UInt8, every: Int)
        case monthlyFixed(day: Int, every: Int)
        case monthlyRelative(week: Int, weekday: Int, every: Int)
        case annual(month: Int, day: Int, every: Int)
        case everyDays(Int)
        case once
    }

    let rule: Rule
    let secondOfDay: Int
    let hour: Int
    let minute: Int
    let local: LocalTime
    /// Local day number of `startDate`.
    let startDay: Int
    let endSeconds: Int64?

    /// The time zone.
    public var timeZone: TimeZone { local.zone }

    /// The first occurrence strictly after `instant`, or nil when the schedule has ended.
    public func next(after instant: Date) -> Date? {
        nextSeconds(after: Int64(instant.timeIntervalSince1970.rounded(.down))).map { Date(timeIntervalSince1970: Double($0)) }
    }

    /// The first occurrence of all (at or after the start date).
    public var first: Date? {
        nextSeconds(after: Int64.min / 4).map { Date(timeIntervalSince1970: Double($0)) }
    }

    /// Up to `count` occurrences strictly after `instant`, in order.
    public func occurrences(after instant: Date, count: Int) -> [Date] {
        var out: [Date] = []
        out.reserveCapacity(max(0, min(count, 10_000)))
        var t = Int64(instant.timeIntervalSince1970.rounded(.down))
        while out.count < count, let n = nextSeconds(after: t) {
            out.append(Date(timeIntervalSince1970: Double(n)))
            t = n
        }
        return out
    }

    /// Occurrences `o` with `range.lowerBound ≤ o < range.upperBound`, in order.
    public func occurrences(in range: Range<Date>, limit: Int = 100_000) -> [Date] {
        var out: [Date] = []
        var t = Int64(range.lowerBound.timeIntervalSince1970.rounded(.up)) - 1
        let end = range.upperBound.timeIntervalSince1970
        while out.count < limit, let n = nextSeconds(after: t), Double(n) < end {
            out.append(Date(timeIntervalSince1970: Double(n)))
            t = n
        }
        return out
    }

    /// Whether `instant` is an occurrence.
    public func isOccurrence(_ instant: Date) -> Bool {
        let s = instant.timeIntervalSince1970
        guard s.rounded() == s else { return false }
        return nextSeconds(after: Int64(s) - 1) == Int64(s)
    }

    // MARK: - Engine

    func nextSeconds(after t: Int64) -> Int64? {
        let fromDay = max(startDay, t <= Int64.min / 8 ? startDay : local.localDay(at: t) - 1)
        var found: Int64?
        switch rule {
        case .once:
            let inst = local.instant(day: startDay, secondOfDay: secondOfDay)
            found = inst > t ? inst : nil
        case .everyDays(let n):
            var day = startDay + CivilCalendar.floorDiv(fromDay - startDay + n - 1, n) * n
            for _ in 0..<4 {
                let inst = local.instant(day: day, secondOfDay: secondOfDay)
                if inst > t { found = inst; break }
                day += n
            }
        case .weekly(let mask, let every):
            found = nextWeekly(after: t, from: fromDay, mask: mask, every: every)
        case .monthlyFixed, .monthlyRelative:
            found = nextMonthly(after: t, from: fromDay)
        case .annual(let month, let day, let every):
            found = nextAnnual(after: t, from: fromDay, month: month, day: day, every: every)
        }
        guard let inst = found else { return nil }
        if let end = endSeconds, inst > end { return nil }
        return inst
    }

    private func nextWeekly(after t: Int64, from fromDay: Int, mask: UInt8, every: Int) -> Int64? {
        let startMonday = startDay - (CivilCalendar.weekday(startDay) - 1)
        var day = fromDay
        for _ in 0..<64 {
            let week = CivilCalendar.floorDiv(day - startMonday, 7)
            let phase = CivilCalendar.mod(week, every)
            if phase != 0 {
                day = startMonday + (week + every - phase) * 7
                continue
            }
            if mask & (1 << UInt8(CivilCalendar.weekday(day) - 1)) != 0 {
                let inst = local.instant(day: day, secondOfDay: secondOfDay)
                if inst > t { return inst }
            }
            day += 1
        }
        return nil
    }

    private func nextMonthly(after t: Int64, from fromDay: Int) -> Int64? {
        let every: Int
        switch rule {
        case .monthlyFixed(_, let e), .monthlyRelative(_, _, let e): every = e
        default: return nil
        }
        let s = CivilCalendar.date(startDay)
        let startIndex = CivilCalendar.monthIndex(year: s.year, month: s.month)
        let f = CivilCalendar.date(fromDay)
        var index = max(startIndex, CivilCalendar.monthIndex(year: f.year, month: f.month))
        let phase = CivilCalendar.mod(index - startIndex, every)
        if phase != 0 { index += every - phase }
        for _ in 0..<64 {
            let year = CivilCalendar.floorDiv(index, 12)
            let month = index - year * 12 + 1
            let day = dayInMonth(year: year, month: month)
            if day >= startDay {
                let inst = local.instant(day: day, secondOfDay: secondOfDay)
                if inst > t { return inst }
            }
            index += every
        }
        return nil
    }

    /// The day number the monthly rule selects in a month.
    private func dayInMonth(year: Int, month: Int) -> Int {
        let length = CivilCalendar.daysIn(year: year, month: month)
        switch rule {
        case .monthlyFixed(let d, _):
            return CivilCalendar.day(year: year, month: month, day: d == 0 ? length : min(d, length))
        case .monthlyRelative(let week, let weekday, _):
            if week == 5 {
                let last = CivilCalendar.day(year: year, month: month, day: length)
                return last - CivilCalendar.mod(CivilCalendar.weekday(last) - weekday, 7)
            }
            let firstOfMonth = CivilCalendar.day(year: year, month: month, day: 1)
            let first = firstOfMonth + CivilCalendar.mod(weekday - CivilCalendar.weekday(firstOfMonth), 7)
            return first + (week - 1) * 7
        default:
            return 0
        }
    }

    private func nextAnnual(after t: Int64, from fromDay: Int, month: Int, day: Int, every: Int) -> Int64? {
        let startYear = CivilCalendar.date(startDay).year
        var year = max(startYear, CivilCalendar.date(fromDay).year)
        let phase = CivilCalendar.mod(year - startYear, every)
        if phase != 0 { year += every - phase }
        for _ in 0..<16 {
            let d = CivilCalendar.day(year: year, month: month, day: min(day, CivilCalendar.daysIn(year: year, month: month)))
            if d >= startDay {
                let inst = local.instant(day: d, secondOfDay: secondOfDay)
                if inst > t { return inst }
            }
            year += every
        }
        return nil
    }
}
