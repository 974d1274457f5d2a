import Contracts
import Foundation
import Wire

/// How long a snooze lasts and whether one more is allowed (US-1.4, `chronir-api.md` §4.6).
public enum SnoozeRules {
    /// Free: 10 minutes and 1 hour.
    public static let freeMinutes = [10, 60]
    /// Plus adds 1 day and 1 week, and any custom length within ``customRange``.
    public static let plusMinutes = [10, 60, 1440, 10_080]
    /// Custom lengths (Plus): a minute to a week, the longest named option.
    public static let customRange = 1...10_080
    /// Snoozes per occurrence an alarm may allow (`maxSnoozeCount`, default 3).
    public static let maxCountRange = 1...10

    /// The length of a snooze: `requested` when the tier allows it, else the alarm's
    /// `snoozeDurationMinutes`, or — when the tier does not allow that one (a Plus default kept
    /// after a downgrade) — the nearest length it does: an alarm that rings must stay snoozable.
    public static func length(requested: Int?, alarmDefault: Int, standing: TierStanding) throws -> Int {
        guard let minutes = requested else { return defaultLength(alarmDefault, tier: standing.tier) }
        guard customRange.contains(minutes) else {
            throw ServiceError(.validationFailed, "minutes must be 1–10080 (a week at most)", details: .object(["field": .string("minutes")]))
        }
        if standing.tier < .plus, !freeMinutes.contains(minutes) {
            let named = plusMinutes.contains(minutes) ? "snoozing for \(label(minutes))" : "a custom snooze length"
            try standing.require(.plus, "\(named) needs Plus (Free snoozes for 10 minutes or 1 hour)")
        }
        return minutes
    }

    /// The length a snooze without `minutes` takes on `tier`.
    public static func defaultLength(_ alarmDefault: Int, tier: Tier) -> Int {
        if tier >= .plus || freeMinutes.contains(alarmDefault) { return alarmDefault }
        return alarmDefault < 35 ? 10 : 60
    }

    /// "1 day", "45 min", …
    public static func label(_ minutes: Int) -> String {
        switch minutes {
        case 10_080: "1 week"
        case 1440: "1 day"
        case 60: "1 hour"
        default: minutes % 60 == 0 ? "\(minutes / 60) hours" : "\(minutes) min"
        }
    }
}
