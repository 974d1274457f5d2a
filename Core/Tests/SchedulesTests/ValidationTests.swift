import Foundation
import Wire
import Schedules
import Testing

@Suite("Schedules: validation")
struct ValidationTests {
    nonisolated(unsafe) static let invalid: [(String, (inout Schedule) -> Void, String)] = [
        ("monthly", { $0.dayOfMonth = 32 }, "schedule.dayOfMonth"),
        ("monthly", { $0.dayOfMonth = -1 }, "schedule.dayOfMonth"),
        ("annual", { $0.month = 2; $0.dayOfMonthAnnual = 30 }, "schedule.dayOfMonthAnnual"),
        ("annual", { $0.month = 4; $0.dayOfMonthAnnual = 31 }, "schedule.dayOfMonthAnnual"),
        ("annual", { $0.month = 13; $0.dayOfMonthAnnual = 1 }, "schedule.month"),
        ("annual", { $0.month = 5 }, "schedule.dayOfMonthAnnual"),
        ("monthly", { $0.monthlyType = "relative"; $0.relativeWeek = 6; $0.relativeDayOfWeek = 1 }, "schedule.relativeWeek"),
        ("monthly", { $0.monthlyType = "relative"; $0.relativeWeek = 1; $0.relativeDayOfWeek = 8 }, "schedule.relativeDayOfWeek"),
        ("monthly", { $0.monthlyType = "relative"; $0.relativeWeek = 1 }, "schedule.relativeDayOfWeek"),
        ("monthly", { _ in }, "schedule.monthlyType"),
        ("monthly", { $0.monthlyType = "weird"; $0.dayOfMonth = 1 }, "schedule.monthlyType"),
        ("weekly", { $0.daysOfWeek = [] }, "schedule.daysOfWeek"),
        ("weekly", { $0.daysOfWeek = [0] }, "schedule.daysOfWeek"),
        ("weekly", { $0.daysOfWeek = [1, 8] }, "schedule.daysOfWeek"),
        ("weekly", { _ in }, "schedule.daysOfWeek"),
        ("weekly", { $0.daysOfWeek = [1]; $0.timeOfDay = "25:00" }, "schedule.timeOfDay"),
        ("weekly", { $0.daysOfWeek = [1]; $0.timeOfDay = "9:00" }, "schedule.timeOfDay"),
        ("weekly", { $0.daysOfWeek = [1]; $0.timeOfDay = "09:60" }, "schedule.timeOfDay"),
        ("weekly", { $0.daysOfWeek = [1]; $0.timezone = "Mars/Olympus" }, "schedule.timezone"),
        ("weekly", { $0.daysOfWeek = [1]; $0.timezone = "" }, "schedule.timezone"),
        ("weekly", { $0.daysOfWeek = [1]; $0.interval = 0 }, "schedule.interval"),
        ("monthly", { $0.dayOfMonth = 1; $0.interval = -2 }, "schedule.interval"),
        ("custom", { _ in }, "schedule.intervalDays"),
        ("custom", { $0.intervalDays = 0 }, "schedule.intervalDays"),
        ("daily", { _ in }, "schedule.type"),
        ("weekly", { $0.daysOfWeek = [1]; $0.endDate = t("2025-01-01T00:00:00Z") }, "schedule.endDate"),
    ]

    @Test("every impossible schedule is refused naming its field", arguments: 0..<invalid.count)
    func refused(_ index: Int) {
        let (type, configure, field) = Self.invalid[index]
        let schedule = Schedule.make(type, configure: configure)
        do {
            _ = try schedule.compile()
            Issue.record("\(field) case was accepted")
        } catch let error as ScheduleError {
            #expect(error.field == field)
            #expect(error.message.hasPrefix(field))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("valid schedules of every type compile; Feb 29 annual is allowed")
    func accepted() throws {
        _ = try Schedule.make("weekly") { $0.daysOfWeek = [1, 1, 7] }.compile()
        _ = try Schedule.make("monthly") { $0.dayOfMonth = 0 }.compile()
        _ = try Schedule.make("monthly") { $0.relativeWeek = 5; $0.relativeDayOfWeek = 5 }.compile()
        _ = try Schedule.make("annual") { $0.month = 2; $0.dayOfMonthAnnual = 29 }.compile()
        _ = try Schedule.make("custom") { $0.intervalDays = 36_500 }.compile()
        _ = try Schedule.make("once").compile()
    }

    @Test("decodes the API's schedule object, nulls included")
    func decodes() throws {
        let json = #"{"type":"monthly","daysOfWeek":null,"dayOfMonth":1,"monthlyType":"fixed","relativeWeek":null,"relativeDayOfWeek":null,"month":null,"dayOfMonthAnnual":null,"intervalDays":null,"timeOfDay":"09:00","timezone":"Asia/Manila","startDate":"2026-02-06T00:00:00Z","endDate":null}"#
        let s = try JSONCoding.decoder().decode(Schedule.self, from: Data(json.utf8))
        #expect(s.dayOfMonth == 1 && s.interval == nil && s.endDate == nil)
        let back = try JSONCoding.decoder().decode(Schedule.self, from: JSONCoding.encode(s))
        #expect(back == s)
    }
}
