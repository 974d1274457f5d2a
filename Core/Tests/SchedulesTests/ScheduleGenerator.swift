import Foundation
import Wire
import Schedules
import CoreTesting

/// A seeded generator of random valid schedules (reproducible: the seed is in every message).
struct ScheduleGenerator {
    static let zones = ["UTC", "America/New_York", "America/Los_Angeles", "Europe/London", "Europe/Berlin", "Australia/Sydney",
                        "Australia/Lord_Howe", "America/St_Johns", "Asia/Kathmandu", "Asia/Kolkata", "Asia/Manila",
                        "Pacific/Auckland", "Pacific/Chatham"]

    var rng: SeededRandom

    init(seed: UInt64) {
        rng = SeededRandom(seed: seed)
    }

    mutating func int(_ r: ClosedRange<Int>) -> Int { Int.random(in: r, using: &rng) }
    mutating func bool() -> Bool { Bool.random(using: &rng) }

    mutating func schedule() -> Schedule {
        let types = ["weekly", "weekly", "monthly", "monthly", "annual", "custom", "once"]
        let type = types[int(0...types.count - 1)]
        // Times near DST switches (01:00–03:00) on purpose, and others.
        let hour = bool() ? int(0...3) : int(0...23)
        let minute = [0, 15, 30, 45, int(0...59)][int(0...4)]
        let time = String(format: "%02d:%02d", hour, minute)
        let start = Date(timeIntervalSince1970: Double(int(946_684_800...1_893_456_000)))  // 2000–2030
        var s = Schedule(type: type, timeOfDay: time, timezone: Self.zones[int(0...Self.zones.count - 1)], startDate: start)
        switch type {
        case "weekly":
            var days = Set<Int>()
            for _ in 0..<int(1...4) { days.insert(int(1...7)) }
            s.daysOfWeek = days.sorted()
            s.interval = bool() ? 1 : int(1...5)
        case "monthly":
            if bool() {
                s.monthlyType = "fixed"
                s.dayOfMonth = bool() ? int(28...31) : int(0...31)
            } else {
                s.monthlyType = "relative"
                s.relativeWeek = int(1...5)
                s.relativeDayOfWeek = int(1...7)
            }
            s.interval = bool() ? 1 : [2, 3, 6, 12][int(0...3)]
        case "annual":
            s.month = int(1...12)
            s.dayOfMonthAnnual = s.month == 2 && bool() ? 29 : int(1...[31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][s.month! - 1])
            s.interval = bool() ? 1 : int(1...4)
        case "custom":
            s.intervalDays = [1, 2, 7, 14, 30, 90, 365, int(1...400)][int(0...7)]
        default:
            break
        }
        if int(0...3) == 0 {
            s.endDate = start.addingTimeInterval(Double(int(0...(5 * 365 * 86_400))))
        }
        return s
    }
}
