import Foundation
import Wire

extension Schedule {
    /// Validates the schedule and returns its computable form, or throws a ``ScheduleError``
    /// naming the first offending field.
    public func compile() throws -> CompiledSchedule {
        let time = try Self.parseTimeOfDay(timeOfDay)
        guard let zone = TimeZone(identifier: timezone), !timezone.isEmpty else {
            throw ScheduleError("timezone", "\"\(timezone)\" is not an IANA time zone")
        }
        if let endDate, endDate < startDate {
            throw ScheduleError("endDate", "is before schedule.startDate")
        }
        if let interval, !(1...1000).contains(interval) {
            throw ScheduleError("interval", "must be an integer from 1 to 1000")
        }
        let step = interval ?? 1
        let rule: CompiledSchedule.Rule
        switch type {
        case "weekly":
            guard let days = daysOfWeek else { throw ScheduleError("daysOfWeek", "is required for a weekly schedule") }
            guard !days.isEmpty else { throw ScheduleError("daysOfWeek", "must list at least one day (1 = Monday … 7 = Sunday)") }
            if let bad = days.first(where: { !(1...7).contains($0) }) {
                throw ScheduleError("daysOfWeek", "contains \(bad); days are 1 (Monday) to 7 (Sunday)")
            }
            var mask: UInt8 = 0
            for d in days { mask |= 1 << UInt8(d - 1) }
            rule = .weekly(mask: mask, every: step)
        case "monthly":
            let kind = monthlyType ?? (dayOfMonth != nil ? "fixed" : (relativeWeek != nil || relativeDayOfWeek != nil) ? "relative" : "")
            switch kind {
            case "fixed":
                guard let d = dayOfMonth else { throw ScheduleError("dayOfMonth", "is required for a fixed monthly schedule") }
                guard (0...31).contains(d) else { throw ScheduleError("dayOfMonth", "must be 1–31, or 0 for the last day (got \(d))") }
                rule = .monthlyFixed(day: d, every: step)
            case "relative":
                guard let w = relativeWeek else { throw ScheduleError("relativeWeek", "is required for a relative monthly schedule") }
                guard (1...5).contains(w) else { throw ScheduleError("relativeWeek", "must be 1–4, or 5 for the last (got \(w))") }
                guard let wd = relativeDayOfWeek else { throw ScheduleError("relativeDayOfWeek", "is required for a relative monthly schedule") }
                guard (1...7).contains(wd) else { throw ScheduleError("relativeDayOfWeek", "must be 1 (Monday) to 7 (Sunday) (got \(wd))") }
                rule = .monthlyRelative(week: w, weekday: wd, every: step)
            case "":
                throw ScheduleError("monthlyType", "is required: fixed (with dayOfMonth) or relative (with relativeWeek and relativeDayOfWeek)")
            default:
                throw ScheduleError("monthlyType", "\"\(kind)\" is not fixed or relative")
            }
        case "annual":
            guard let m = month else { throw ScheduleError("month", "is required for an annual schedule") }
            guard (1...12).contains(m) else { throw ScheduleError("month", "must be 1–12 (got \(m))") }
            guard let d = dayOfMonthAnnual else { throw ScheduleError("dayOfMonthAnnual", "is required for an annual schedule") }
            guard d >= 1, d <= CivilCalendar.daysIn(year: 2000, month: m) else {
                throw ScheduleError("dayOfMonthAnnual", "\(d) does not exist in month \(m)")
            }
            rule = .annual(month: m, day: d, every: step)
        case "custom":
            guard let n = intervalDays else { throw ScheduleError("intervalDays", "is required for a custom schedule") }
            guard (1...36_500).contains(n) else { throw ScheduleError("intervalDays", "must be 1–36500 (got \(n))") }
            rule = .everyDays(n)
        case "once":
            rule = .once
        default:
            throw ScheduleError("type", "\"\(type)\" is not one of weekly, monthly, annual, custom, once")
        }
        let local = LocalTime(zone: zone)
        let startSeconds = Int64(startDate.timeIntervalSince1970.rounded(.down))
        return CompiledSchedule(
            schedule: self, rule: rule, secondOfDay: time.hour * 3600 + time.minute * 60, hour: time.hour, minute: time.minute,
            local: local, startDay: local.localDay(at: startSeconds),
            endSeconds: endDate.map { Int64($0.timeIntervalSince1970.rounded(.down)) }
        )
    }

    /// Parses `HH:mm` (00:00–23:59).
    static func parseTimeOfDay(_ text: String) throws -> (hour: Int, minute: Int) {
        let u = Array(text.utf8)
        func digit(_ c: UInt8) -> Int? { c >= 48 && c <= 57 ? Int(c - 48) : nil }
        guard u.count == 5, u[2] == UInt8(ascii: ":"), let h1 = digit(u[0]), let h2 = digit(u[1]), let m1 = digit(u[3]), let m2 = digit(u[4]),
              h1 * 10 + h2 < 24, m1 * 10 + m2 < 60
        else { throw ScheduleError("timeOfDay", "must be HH:mm from 00:00 to 23:59 (got \"\(text)\")") }
        return (h1 * 10 + h2, m1 * 10 + m2)
    }
}

/// The cycle types of the technical specification (§4.1) and the schedules they stand for.
public enum CycleType: String, Sendable, CaseIterable {
    case weekly, biweekly, monthly, quarterly, biannual, annual, custom, oneTime

    /// The `type` and `interval` of the equivalent ``Schedule``.
    public var scheduleType: (type: String, interval: Int?) {
        switch self {
        case .weekly: ("weekly", 1)
        case .biweekly: ("weekly", 2)
        case .monthly: ("monthly", 1)
        case .quarterly: ("monthly", 3)
        case .biannual: ("monthly", 6)
        case .annual: ("annual", 1)
        case .custom: ("custom", nil)
        case .oneTime: ("once", nil)
        }
    }
}
