import Foundation
import Schedules
import Testing

/// Properties over many generated schedules, checked with Foundation's `Calendar` (a code path
/// independent of the engine's own calendar arithmetic).
@Suite("Schedules: properties")
struct PropertyTests {
    /// Whether the local date of `instant` is one the rule selects (independent predicate).
    static func matches(_ s: Schedule, day: DateComponents, startDay: DateComponents, calendar: Calendar) -> Bool {
        let y = day.year!, m = day.month!, d = day.day!
        let date = calendar.date(from: DateComponents(year: y, month: m, day: d))!
        let start = calendar.date(from: DateComponents(year: startDay.year!, month: startDay.month!, day: startDay.day!))!
        guard date >= start else { return false }
        let length = calendar.range(of: .day, in: .month, for: date)!.count
        let isoWeekday = (calendar.component(.weekday, from: date) + 5) % 7 + 1
        let days = calendar.dateComponents([.day], from: start, to: date).day!
        let months = (y * 12 + m) - (startDay.year! * 12 + startDay.month!)
        switch s.type {
        case "weekly":
            let startWeekday = (calendar.component(.weekday, from: start) + 5) % 7 + 1
            let weeks = Int((Double(days + startWeekday - 1) / 7).rounded(.down))
            return s.daysOfWeek!.contains(isoWeekday) && weeks % (s.interval ?? 1) == 0
        case "monthly" where s.monthlyType == "fixed":
            let target = s.dayOfMonth! == 0 ? length : min(s.dayOfMonth!, length)
            return d == target && months % (s.interval ?? 1) == 0
        case "monthly":
            guard isoWeekday == s.relativeDayOfWeek!, months % (s.interval ?? 1) == 0 else { return false }
            if s.relativeWeek! == 5 { return d + 7 > length }
            return (d - 1) / 7 + 1 == s.relativeWeek!
        case "annual":
            let target = min(s.dayOfMonthAnnual!, calendar.range(of: .day, in: .month, for: date)!.count)
            return m == s.month! && d == target && (y - startDay.year!) % (s.interval ?? 1) == 0
        case "custom":
            return days % s.intervalDays! == 0
        default:
            return days == 0
        }
    }

    @Test("occurrences increase, satisfy the rule, skip none and never pass the end", arguments: 0..<8)
    func properties(_ shard: Int) throws {
        var generator = ScheduleGenerator(seed: 0xC0FFEE + UInt64(shard))
        for n in 0..<120 {
            let schedule = generator.schedule()
            let context = "seed shard \(shard) #\(n): \(schedule)"
            let compiled = try schedule.compile()
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: schedule.timezone)!
            let startDay = calendar.dateComponents([.year, .month, .day], from: schedule.startDate)
            let after = schedule.startDate.addingTimeInterval(Double(generator.int(-86_400 * 40...86_400 * 400)))
            let occurrences = compiled.occurrences(after: after, count: 30)
            var previous = after
            for o in occurrences {
                #expect(o > previous, "\(context)")
                previous = o
                if let end = schedule.endDate { #expect(o <= end, "\(context)") }
                #expect(compiled.next(after: o.addingTimeInterval(-1)) == o, "\(context)")
                let local = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: o)
                #expect(Self.matches(schedule, day: local, startDay: startDay, calendar: calendar), "\(context) at \(o)")
                // The local time is timeOfDay, or later by a daylight-saving gap.
                let wanted = Int(schedule.timeOfDay.prefix(2))! * 60 + Int(schedule.timeOfDay.suffix(2))!
                let got = local.hour! * 60 + local.minute!
                #expect(got == wanted || (got > wanted && got - wanted <= 120), "\(context) at \(o): local \(got) vs \(wanted)")
            }
            // None skipped: no day between consecutive occurrences matches the rule.
            for (a, b) in zip(occurrences, occurrences.dropFirst()) {
                #expect(compiled.next(after: a) == b, "\(context)")
                var day = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: a))!
                let lastDay = calendar.startOfDay(for: b)
                var checked = 0
                while day < lastDay && checked < 70 {
                    let comps = calendar.dateComponents([.year, .month, .day], from: day)
                    #expect(!Self.matches(schedule, day: comps, startDay: startDay, calendar: calendar), "\(context): skipped \(comps)")
                    day = calendar.date(byAdding: .day, value: 1, to: day)!
                    checked += 1
                }
            }
            // Nothing after the end.
            if let end = schedule.endDate {
                #expect(compiled.next(after: end) == nil, "\(context)")
            }
        }
    }
}
