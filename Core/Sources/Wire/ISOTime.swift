import Foundation

/// RFC 3339 timestamps: what every JSON message and API response uses.
///
/// Output is UTC with a `Z`: `2026-03-01T09:00:00Z`, or with milliseconds when the instant
/// has them (`2026-03-01T09:00:00.250Z`). Input accepts `Z` or a numeric offset and any number
/// of fraction digits (milliseconds are kept).
public enum ISOTime {
    /// Formats an instant.
    public static func format(_ date: Date) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded(.toNearestOrEven))
        return format(epochMilliseconds: ms)
    }

    /// Formats an instant in whole seconds (fraction dropped).
    public static func formatSeconds(_ date: Date) -> String {
        let s = Int64(date.timeIntervalSince1970.rounded(.down))
        return format(epochMilliseconds: s * 1000)
    }

    /// Formats milliseconds since the Unix epoch.
    public static func format(epochMilliseconds ms: Int64) -> String {
        var seconds = ms / 1000
        var millis = Int(ms % 1000)
        if millis < 0 {
            millis += 1000
            seconds -= 1
        }
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let c = CivilCalendar.date(Int(days))
        let sod = Int(seconds - days * 86400)
        return String(unsafeUninitializedCapacity: 24) { out in
            var k = 0
            func put(_ v: Int, _ width: Int) {
                var v = v
                var i = width - 1
                while i >= 0 {
                    out[k + i] = UInt8(48 + v % 10)
                    v /= 10
                    i -= 1
                }
                k += width
            }
            func sep(_ c: UInt8) {
                out[k] = c
                k += 1
            }
            put(c.year, 4); sep(0x2D); put(c.month, 2); sep(0x2D); put(c.day, 2); sep(0x54)
            put(sod / 3600, 2); sep(0x3A); put(sod / 60 % 60, 2); sep(0x3A); put(sod % 60, 2)
            if millis != 0 {
                sep(0x2E)
                put(millis, 3)
            }
            sep(0x5A)
            return k
        }
    }

    /// Parses an RFC 3339 timestamp; nil when it is not one.
    public static func parse(_ text: String) -> Date? {
        guard let ms = parseEpochMilliseconds(text) else { return nil }
        return Date(timeIntervalSince1970: Double(ms) / 1000)
    }

    /// Parses an RFC 3339 timestamp to milliseconds since the epoch.
    public static func parseEpochMilliseconds(_ text: String) -> Int64? {
        if let ms = text.utf8.withContiguousStorageIfAvailable({ parseEpochMilliseconds(UnsafeRawBufferPointer($0)) }) {
            return ms
        }
        return Array(text.utf8).withUnsafeBytes { parseEpochMilliseconds($0) }
    }

    /// Parses an RFC 3339 timestamp in UTF-8 bytes (a decoder reads it where it lies).
    static func parseEpochMilliseconds(_ u: UnsafeRawBufferPointer) -> Int64? {
        guard u.count >= 20 else { return nil }
        func num(_ from: Int, _ len: Int) -> Int? {
            guard from + len <= u.count else { return nil }
            var v = 0
            for k in from..<(from + len) {
                let c = u[k]
                guard c >= 0x30, c <= 0x39 else { return nil }
                v = v * 10 + Int(c - 0x30)
            }
            return v
        }
        guard let year = num(0, 4), u[4] == 0x2D, let month = num(5, 2), u[7] == 0x2D, let day = num(8, 2),
              u[10] == UInt8(ascii: "T") || u[10] == UInt8(ascii: "t") || u[10] == 0x20,
              let hour = num(11, 2), u[13] == 0x3A, let minute = num(14, 2), u[16] == 0x3A, let second = num(17, 2)
        else { return nil }
        guard (1...12).contains(month), (1...CivilCalendar.daysIn(year: year, month: month)).contains(day),
              hour < 24, minute < 60, second < 61 else { return nil }
        var k = 19
        var millis = 0
        if k < u.count, u[k] == 0x2E {
            k += 1
            var digits = 0
            while k < u.count, u[k] >= 0x30, u[k] <= 0x39 {
                if digits < 3 { millis = millis * 10 + Int(u[k] - 0x30) }
                digits += 1
                k += 1
            }
            guard digits > 0 else { return nil }
            if digits < 3 { for _ in digits..<3 { millis *= 10 } }
        }
        guard k < u.count else { return nil }
        var offsetSeconds = 0
        switch u[k] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            k += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = u[k] == UInt8(ascii: "+") ? 1 : -1
            guard let oh = num(k + 1, 2), k + 3 < u.count, u[k + 3] == 0x3A, let om = num(k + 4, 2), oh < 24, om < 60 else { return nil }
            offsetSeconds = sign * (oh * 3600 + om * 60)
            k += 6
        default:
            return nil
        }
        guard k == u.count else { return nil }
        let days = CivilCalendar.day(year: year, month: month, day: day)
        let secs = Int64(days) * 86400 + Int64(hour * 3600 + minute * 60 + min(second, 59)) - Int64(offsetSeconds)
        return secs * 1000 + Int64(millis)
    }
}
