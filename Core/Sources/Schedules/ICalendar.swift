import Foundation
import Wire

/// RFC 5545 text helpers for calendar feeds: escaping, line folding, time zone components.
public enum ICalendar {
    /// Escapes a TEXT value (§3.3.11) so that it stays inside its content line. Walks Unicode
    /// scalars, not `Character`s: `"\r\n"` is one `Character`, equal to neither `"\r"` nor
    /// `"\n"`, and went through whole (a note could inject events into every member's calendar).
    /// Every line break a reader may honour (CR LF, CR, LF, NEL, LS, PS) becomes `\n`; other
    /// control characters, which TEXT does not allow, are dropped (a tab is kept).
    public static func escape(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var afterCR = false
        for scalar in text.unicodeScalars {
            defer { afterCR = scalar == "\r" }
            switch scalar {
            case "\\": out.append(contentsOf: "\\\\".unicodeScalars)
            case ";": out.append(contentsOf: "\\;".unicodeScalars)
            case ",": out.append(contentsOf: "\\,".unicodeScalars)
            case "\n" where afterCR: break   // the LF of a CR LF: the CR wrote the break
            case "\r", "\n", "\u{85}", "\u{2028}", "\u{2029}": out.append(contentsOf: "\\n".unicodeScalars)
            case "\t": out.append(scalar)
            default:
                if scalar.properties.generalCategory == .control { continue }
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Folds a content line at 75 octets (§3.1), never splitting a UTF-8 sequence.
    public static func fold(_ line: String) -> String {
        var out = ""
        var current = 0
        for scalar in line.unicodeScalars {
            let size = String(scalar).utf8.count
            if current + size > 75 {
                out += "\r\n "
                current = 1
            }
            out.unicodeScalars.append(scalar)
            current += size
        }
        return out
    }

    /// A VTIMEZONE for `zone` with one STANDARD/DAYLIGHT component per UTC-offset change between
    /// `from` and `to` (plus the offset in force at `from`), so a calendar shows the local times
    /// the backend computes even for zones whose rules changed.
    public static func vtimezone(_ zone: TimeZone, from: Date, to: Date) -> [String] {
        var lines = ["BEGIN:VTIMEZONE", "TZID:\(zone.identifier)"]
        var components: [(name: String, onset: Date, from: Int, to: Int)] = []
        var t = from
        var offset = zone.secondsFromGMT(for: from)
        components.append((zone.isDaylightSavingTime(for: from) ? "DAYLIGHT" : "STANDARD", Date(timeIntervalSince1970: 0), offset, offset))
        var guardCount = 0
        while let next = zone.nextDaylightSavingTimeTransition(after: t), next < to, guardCount < 1000 {
            let newOffset = zone.secondsFromGMT(for: next)
            if newOffset != offset {
                components.append((zone.isDaylightSavingTime(for: next) ? "DAYLIGHT" : "STANDARD", next, offset, newOffset))
                offset = newOffset
            }
            t = next
            guardCount += 1
        }
        for c in components {
            lines.append("BEGIN:\(c.name)")
            lines.append("DTSTART:\(localStamp(c.onset, offset: c.from))")
            lines.append("TZOFFSETFROM:\(offsetText(c.from))")
            lines.append("TZOFFSETTO:\(offsetText(c.to))")
            lines.append("END:\(c.name)")
        }
        lines.append("END:VTIMEZONE")
        return lines
    }

    /// `YYYYMMDDTHHMMSSZ` of an instant.
    public static func utcStamp(_ date: Date) -> String {
        CompiledSchedule.utcStamp(Int64(date.timeIntervalSince1970.rounded(.down)))
    }

    static func localStamp(_ date: Date, offset: Int) -> String {
        let seconds = Int(date.timeIntervalSince1970) + offset
        let day = CivilCalendar.floorDiv(seconds, 86_400)
        let sod = seconds - day * 86_400
        let d = CivilCalendar.date(day)
        return String(format: "%04d%02d%02dT%02d%02d%02d", d.year, d.month, d.day, sod / 3600, sod / 60 % 60, sod % 60)
    }

    static func offsetText(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let a = abs(seconds)
        return a % 60 == 0
            ? String(format: "%@%02d%02d", sign, a / 3600, a / 60 % 60)
            : String(format: "%@%02d%02d%02d", sign, a / 3600, a / 60 % 60, a % 60)
    }
}
