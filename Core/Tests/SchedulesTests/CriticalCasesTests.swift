import Foundation
import Schedules
import Testing

/// The critical cases of `chronir-technical-spec.md` §12.2 and `chronir-api.md` §4.5, with
/// expected values computed independently (Python `calendar` and `zoneinfo`).
@Suite("Schedules: critical cases")
struct CriticalCasesTests {
    @Test("the 31st falls on the last day of Feb, Apr, Jun, Sep and Nov")
    func thirtyFirst() throws {
        let s = try Schedule.make("monthly") { $0.dayOfMonth = 31 }.compile()
        #expect(z(s.occurrences(after: t("2025-12-31T12:00:00Z"), count: 12)) == [
            "2026-01-31T09:00:00Z", "2026-02-28T09:00:00Z", "2026-03-31T09:00:00Z", "2026-04-30T09:00:00Z",
            "2026-05-31T09:00:00Z", "2026-06-30T09:00:00Z", "2026-07-31T09:00:00Z", "2026-08-31T09:00:00Z",
            "2026-09-30T09:00:00Z", "2026-10-31T09:00:00Z", "2026-11-30T09:00:00Z", "2026-12-31T09:00:00Z",
        ])
        #expect(z([s.next(after: t("2028-02-01T00:00:00Z"))!]) == ["2028-02-29T09:00:00Z"])
        let last = try Schedule.make("monthly") { $0.dayOfMonth = 0 }.compile()
        #expect(z(last.occurrences(after: t("2028-01-01T00:00:00Z"), count: 3)) == ["2028-01-31T09:00:00Z", "2028-02-29T09:00:00Z", "2028-03-31T09:00:00Z"])
        let thirtieth = try Schedule.make("monthly") { $0.dayOfMonth = 30; $0.monthlyType = "fixed" }.compile()
        #expect(z(thirtieth.occurrences(after: t("2026-02-01T00:00:00Z"), count: 2)) == ["2026-02-28T09:00:00Z", "2026-03-30T09:00:00Z"])
    }

    @Test("last Friday of every month of a year")
    func lastFriday() throws {
        let s = try Schedule.make("monthly") { $0.monthlyType = "relative"; $0.relativeWeek = 5; $0.relativeDayOfWeek = 5 }.compile()
        let days = s.occurrences(after: t("2025-12-31T00:00:00Z"), count: 12).map { Calendar(identifier: .gregorian).component(.day, from: $0) }
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let dayNumbers = s.occurrences(after: t("2025-12-31T00:00:00Z"), count: 12).map { utc.component(.day, from: $0) }
        #expect(dayNumbers == [30, 27, 27, 24, 29, 26, 31, 28, 25, 30, 27, 25])
        #expect(days.count == 12)
        let firstMonday = try Schedule.make("monthly") { $0.relativeWeek = 1; $0.relativeDayOfWeek = 1 }.compile()
        #expect(z(firstMonday.occurrences(after: t("2026-01-01T00:00:00Z"), count: 3)) == ["2026-01-05T09:00:00Z", "2026-02-02T09:00:00Z", "2026-03-02T09:00:00Z"])
    }

    @Test("Feb 29 annual: Feb 29 in leap years, Feb 28 otherwise")
    func leapDay() throws {
        let s = try Schedule.make("annual", start: "2024-01-01T00:00:00Z") { $0.month = 2; $0.dayOfMonthAnnual = 29 }.compile()
        #expect(z(s.occurrences(after: t("2024-01-01T00:00:00Z"), count: 5)) == [
            "2024-02-29T09:00:00Z", "2025-02-28T09:00:00Z", "2026-02-28T09:00:00Z", "2027-02-28T09:00:00Z", "2028-02-29T09:00:00Z",
        ])
        #expect(z(s.occurrences(after: t("2099-03-01T00:00:00Z"), count: 2)) == ["2100-02-28T09:00:00Z", "2101-02-28T09:00:00Z"])
    }

    @Test("DST in America/New_York: the spring-forward gap and the fall-back overlap")
    func newYork() throws {
        let s = try Schedule.make("custom", time: "02:30", zone: "America/New_York", start: "2026-03-06T12:00:00Z") { $0.intervalDays = 1 }.compile()
        #expect(z(s.occurrences(after: t("2026-03-07T00:00:00Z"), count: 3)) == ["2026-03-07T07:30:00Z", "2026-03-08T07:30:00Z", "2026-03-09T06:30:00Z"])
        let back = try Schedule.make("custom", time: "01:30", zone: "America/New_York", start: "2026-10-30T12:00:00Z") { $0.intervalDays = 1 }.compile()
        #expect(z(back.occurrences(after: t("2026-10-31T12:00:00Z"), count: 2)) == ["2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"])
    }

    @Test("DST in Europe/London")
    func london() throws {
        let gap = try Schedule.make("custom", time: "01:30", zone: "Europe/London", start: "2026-03-01T00:00:00Z") { $0.intervalDays = 1 }.compile()
        #expect(z([gap.next(after: t("2026-03-29T00:00:00Z"))!]) == ["2026-03-29T01:30:00Z"])
        #expect(z([gap.next(after: t("2026-10-25T00:00:00Z"))!]) == ["2026-10-25T00:30:00Z"])
    }

    @Test("DST in Australia/Sydney (southern hemisphere)")
    func sydney() throws {
        let s = try Schedule.make("custom", time: "02:30", zone: "Australia/Sydney", start: "2026-03-01T00:00:00Z") { $0.intervalDays = 1 }.compile()
        #expect(z([s.next(after: t("2026-04-04T12:00:00Z"))!]) == ["2026-04-04T15:30:00Z"])   // overlap: first (AEDT)
        #expect(z([s.next(after: t("2026-10-03T12:00:00Z"))!]) == ["2026-10-03T16:30:00Z"])   // gap: 02:30 AEST = 03:30 AEDT
    }

    @Test("DST in zones with 30- and 45-minute offsets")
    func oddOffsets() throws {
        // Lord Howe moves its clocks by 30 minutes.
        let lh = try Schedule.make("custom", time: "01:45", zone: "Australia/Lord_Howe", start: "2026-03-01T00:00:00Z") { $0.intervalDays = 1 }.compile()
        #expect(z([lh.next(after: t("2026-04-04T00:00:00Z"))!]) == ["2026-04-04T14:45:00Z"])
        let lhGap = try Schedule.make("custom", time: "02:15", zone: "Australia/Lord_Howe", start: "2026-09-01T00:00:00Z") { $0.intervalDays = 1 }.compile()
        #expect(z(lhGap.occurrences(after: t("2026-10-03T00:00:00Z"), count: 2)) == ["2026-10-03T15:45:00Z", "2026-10-04T15:15:00Z"])
        // Newfoundland: UTC−3:30 with DST.
        let nf = try Schedule.make("custom", time: "02:30", zone: "America/St_Johns", start: "2026-03-01T00:00:00Z") { $0.intervalDays = 1 }.compile()
        #expect(z([nf.next(after: t("2026-03-08T00:00:00Z"))!]) == ["2026-03-08T06:00:00Z"])
        let nfBack = try Schedule.make("custom", time: "01:30", zone: "America/St_Johns", start: "2026-10-01T00:00:00Z") { $0.intervalDays = 1 }.compile()
        #expect(z([nfBack.next(after: t("2026-11-01T00:00:00Z"))!]) == ["2026-11-01T04:00:00Z"])
        // Kathmandu: UTC+5:45.
        let kt = try Schedule.make("weekly", zone: "Asia/Kathmandu", start: "2025-12-29T00:00:00Z") { $0.daysOfWeek = [4] }.compile()
        #expect(z([kt.next(after: t("2025-12-31T00:00:00Z"))!]) == ["2026-01-01T03:15:00Z"])
    }

    @Test("every 90 days across a year boundary")
    func ninetyDays() throws {
        let s = try Schedule.make("custom", start: "2025-11-15T00:00:00Z") { $0.intervalDays = 90 }.compile()
        #expect(z(s.occurrences(after: t("2025-11-01T00:00:00Z"), count: 5)) == [
            "2025-11-15T09:00:00Z", "2026-02-13T09:00:00Z", "2026-05-14T09:00:00Z", "2026-08-12T09:00:00Z", "2026-11-10T09:00:00Z",
        ])
    }

    @Test("biweekly, quarterly and biannual keep their phase from the start date")
    func phases() throws {
        // Week of Monday 2026-01-05 is week 0; Tuesday Jan 6 is before the start date.
        let biweekly = try Schedule.make("weekly", start: "2026-01-07T00:00:00Z") { $0.daysOfWeek = [2]; $0.interval = 2 }.compile()
        #expect(z(biweekly.occurrences(after: t("2026-01-01T00:00:00Z"), count: 3)) == ["2026-01-20T09:00:00Z", "2026-02-03T09:00:00Z", "2026-02-17T09:00:00Z"])
        let quarterly = try Schedule.make("monthly", start: "2026-02-10T00:00:00Z") { $0.dayOfMonth = 15; $0.interval = 3 }.compile()
        #expect(z(quarterly.occurrences(after: t("2026-01-01T00:00:00Z"), count: 4)) == [
            "2026-02-15T09:00:00Z", "2026-05-15T09:00:00Z", "2026-08-15T09:00:00Z", "2026-11-15T09:00:00Z",
        ])
        let biannual = try Schedule.make("monthly", start: "2026-03-05T00:00:00Z") { $0.dayOfMonth = 1; $0.interval = 6 }.compile()
        #expect(z(biannual.occurrences(after: t("2026-01-01T00:00:00Z"), count: 3)) == ["2026-09-01T09:00:00Z", "2027-03-01T09:00:00Z", "2027-09-01T09:00:00Z"])
        #expect(CycleType.quarterly.scheduleType.interval == 3 && CycleType.biweekly.scheduleType == ("weekly", 2))
    }

    @Test("endDate is inclusive and nothing comes after it")
    func endDate() throws {
        let s = try Schedule.make("custom", end: "2026-01-03T09:00:00Z") { $0.intervalDays = 1 }.compile()
        #expect(z(s.occurrences(after: t("2025-12-31T00:00:00Z"), count: 10)) == ["2026-01-01T09:00:00Z", "2026-01-02T09:00:00Z", "2026-01-03T09:00:00Z"])
        #expect(s.next(after: t("2026-01-03T09:00:00Z")) == nil)
    }

    @Test("once fires once, on the local date of the start")
    func once() throws {
        let s = try Schedule.make("once", zone: "Asia/Manila", start: "2026-05-01T00:00:00Z").compile()
        #expect(z(s.occurrences(after: t("2026-01-01T00:00:00Z"), count: 3)) == ["2026-05-01T01:00:00Z"])
        #expect(s.next(after: t("2026-05-01T01:00:00Z")) == nil)
    }

    @Test("next is strictly after; the start date counts in the schedule's zone")
    func strictlyAfter() throws {
        // The API example: monthly on the 1st at 09:00 Manila, starting 2026-02-06.
        let s = try Schedule.make("monthly", zone: "Asia/Manila", start: "2026-02-06T00:00:00Z") { $0.dayOfMonth = 1; $0.monthlyType = "fixed" }.compile()
        #expect(z([s.first!]) == ["2026-03-01T01:00:00Z"])
        #expect(z([s.next(after: t("2026-03-01T01:00:00Z"))!]) == ["2026-04-01T01:00:00Z"])
        #expect(z([s.next(after: t("2026-03-01T00:59:59Z"))!]) == ["2026-03-01T01:00:00Z"])
        // 23:30 UTC on Jan 31 is already Feb 1 in Manila: the start date is Feb 1 there.
        let local = try Schedule.make("monthly", zone: "Asia/Manila", start: "2026-01-31T23:30:00Z") { $0.dayOfMonth = 1 }.compile()
        #expect(z([local.first!]) == ["2026-02-01T01:00:00Z"])
        #expect(s.occurrences(in: t("2026-03-01T01:00:00Z")..<t("2026-06-01T01:00:00Z")).count == 3)
    }
}
