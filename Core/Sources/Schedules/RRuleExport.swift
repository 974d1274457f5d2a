import Foundation
import Wire

extension CompiledSchedule {
    /// The schedule as RFC 5545 `DTSTART;TZID=…` and `RRULE:…` lines (for calendar feeds).
    ///
    /// `DTSTART` is the first occurrence (RFC 5545 counts DTSTART as an instance, so it must
    /// match the rule), which also fixes the phase of `INTERVAL`. Month-end clamping is written
    /// as `BYMONTHDAY=28,…,d;BYSETPOS=-1`, "last" as `BYMONTHDAY=-1` or `BYDAY=-1FR`, and the
    /// inclusive end as `UNTIL` in UTC. Nil when the schedule has no occurrence at all.
    public var rrule: (dtstart: String, rrule: String)? {
        guard let first = first else { return nil }
        let seconds = Int64(first.timeIntervalSince1970)
        let day = local.localDay(at: seconds)
        let date = CivilCalendar.date(day)
        func pad(_ v: Int, _ w: Int) -> String { String(repeating: "0", count: max(0, w - String(v).count)) + String(v) }
        let dtstart = "DTSTART;TZID=\(local.zone.identifier):\(pad(date.year, 4))\(pad(date.month, 2))\(pad(date.day, 2))T\(pad(hour, 2))\(pad(minute, 2))00"
        var parts: [String] = []
        switch rule {
        case .once:
            parts = ["FREQ=DAILY", "COUNT=1"]
        case .everyDays(let n):
            parts = ["FREQ=DAILY", "INTERVAL=\(n)"]
        case .weekly(let mask, let every):
            let names = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
            let days = (0..<7).filter { mask & (1 << UInt8($0)) != 0 }.map { names[$0] }
            parts = ["FREQ=WEEKLY", "INTERVAL=\(every)", "BYDAY=\(days.joined(separator: ","))", "WKST=MO"]
        case .monthlyFixed(let d, let every):
            parts = ["FREQ=MONTHLY", "INTERVAL=\(every)"] + Self.monthDayParts(d)
        case .monthlyRelative(let week, let weekday, let every):
            let names = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
            parts = ["FREQ=MONTHLY", "INTERVAL=\(every)", "BYDAY=\(week == 5 ? -1 : week)\(names[weekday - 1])"]
        case .annual(let month, let d, let every):
            parts = ["FREQ=YEARLY", "INTERVAL=\(every)", "BYMONTH=\(month)"] + Self.monthDayParts(d)
        }
        if let end = endSeconds, rule != .once {
            parts.append("UNTIL=\(Self.utcStamp(end))")
        }
        return (dtstart, "RRULE:" + parts.joined(separator: ";"))
    }

    /// `DTSTART` and `RRULE` joined by CRLF, as they go in a VEVENT.
    public var rruleText: String? {
        rrule.map { "\($0.dtstart)\r\n\($0.rrule)" }
    }

    static func monthDayParts(_ d: Int) -> [String] {
        if d == 0 { return ["BYMONTHDAY=-1"] }
        if d <= 28 { return ["BYMONTHDAY=\(d)"] }
        return ["BYMONTHDAY=\((28...d).map(String.init).joined(separator: ","))", "BYSETPOS=-1"]
    }

    static func utcStamp(_ seconds: Int64) -> String {
        let day = Int(CivilCalendar.floorDiv(Int(seconds), 86_400))
        let sod = Int(seconds) - day * 86_400
        let d = CivilCalendar.date(day)
        func pad(_ v: Int, _ w: Int) -> String { String(repeating: "0", count: max(0, w - String(v).count)) + String(v) }
        return "\(pad(d.year, 4))\(pad(d.month, 2))\(pad(d.day, 2))T\(pad(sod / 3600, 2))\(pad(sod / 60 % 60, 2))\(pad(sod % 60, 2))Z"
    }
}
