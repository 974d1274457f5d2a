import Foundation
import Wire
import Schedules

/// Parses an RFC 3339 instant (tests only: crashes on bad input).
func t(_ text: String) -> Date { ISOTime.parse(text)! }

/// Formats instants like the expected values in the tests.
func z(_ dates: [Date]) -> [String] { dates.map(ISOTime.formatSeconds) }

extension Schedule {
    static func make(_ type: String, time: String = "09:00", zone: String = "UTC", start: String = "2026-01-01T00:00:00Z",
                     end: String? = nil, configure: (inout Schedule) -> Void = { _ in }) -> Schedule {
        var s = Schedule(type: type, timeOfDay: time, timezone: zone, startDate: t(start), endDate: end.map(t))
        configure(&s)
        return s
    }
}
