import Foundation

/// The words of pre-alarm warnings (US-2.1): "Tomorrow: Pay rent at 9:00 AM", "In 3 days: Pay rent".
public enum PreAlarmText {
    /// The warning for `title`, `offsetMinutes` before `occurrence`, the time of day in the
    /// alarm's `timezone` (UTC when the identifier is unknown).
    public static func text(title: String, offsetMinutes: Int, occurrence: Date, timezone: String) -> String {
        switch offsetMinutes {
        case 1440:
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: timezone) ?? TimeZone(identifier: "UTC")!
            formatter.dateFormat = "h:mm a"
            return "Tomorrow: \(title) at \(formatter.string(from: occurrence))"
        case let m where m % 1440 == 0:
            return "In \(m / 1440) days: \(title)"
        case 60:
            return "In 1 hour: \(title)"
        case let m where m % 60 == 0:
            return "In \(m / 60) hours: \(title)"
        default:
            return "In \(offsetMinutes) minutes: \(title)"
        }
    }
}
