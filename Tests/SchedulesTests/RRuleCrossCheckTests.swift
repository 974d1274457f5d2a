import Foundation
import Messaging
import Schedules
import Testing

/// The engine against an independent RFC 5545 implementation (python-dateutil) on thousands of
/// generated schedules, through the engine's own RRULE export.
@Suite("Schedules: cross-check with python-dateutil")
struct RRuleCrossCheckTests {
    struct Case: Encodable {
        var dtstart: String
        var rrule: String
        var after: Int64
        var count: Int
        var expected: [Int64]
    }

    @Test("3 000 generated schedules expand identically")
    func crossCheck() throws {
        var generator = ScheduleGenerator(seed: 20_261_122)
        var lines: [String] = []
        for _ in 0..<3_000 {
            let schedule = generator.schedule()
            let compiled = try schedule.compile()
            guard let rule = compiled.rrule else { continue }
            let after = schedule.startDate.addingTimeInterval(Double(generator.int(-86_400 * 30...86_400 * 3 * 365)))
            let expected = compiled.occurrences(after: after, count: 12).map { Int64($0.timeIntervalSince1970) }
            let c = Case(dtstart: rule.dtstart, rrule: rule.rrule, after: Int64(after.timeIntervalSince1970.rounded(.down)),
                         count: 12, expected: expected)
            lines.append(String(decoding: try JSONCoding.encode(c), as: UTF8.self))
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("rrule-\(UUID().uuidString).jsonl")
        try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", root.appendingPathComponent("scripts/rrule_crosscheck.py").path, file.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output.prefix(4000))")
        #expect(output.contains("\(lines.count) cases, 0 mismatches"), "\(output.prefix(4000))")
        #expect(lines.count > 2_900)
    }

    @Test("RRULE export of the documented shapes")
    func shapes() throws {
        let thirtyFirst = try Schedule.make("monthly", zone: "America/New_York", start: "2026-01-01T12:00:00Z", end: "2026-12-31T23:59:59Z") {
            $0.dayOfMonth = 31
        }.compile()
        #expect(thirtyFirst.rrule?.dtstart == "DTSTART;TZID=America/New_York:20260131T090000")
        #expect(thirtyFirst.rrule?.rrule == "RRULE:FREQ=MONTHLY;INTERVAL=1;BYMONTHDAY=28,29,30,31;BYSETPOS=-1;UNTIL=20261231T235959Z")
        let lastFriday = try Schedule.make("monthly") { $0.relativeWeek = 5; $0.relativeDayOfWeek = 5 }.compile()
        #expect(lastFriday.rrule?.rrule == "RRULE:FREQ=MONTHLY;INTERVAL=1;BYDAY=-1FR")
        let biweekly = try Schedule.make("weekly") { $0.daysOfWeek = [1, 3]; $0.interval = 2 }.compile()
        #expect(biweekly.rrule?.rrule == "RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE;WKST=MO")
        let leap = try Schedule.make("annual") { $0.month = 2; $0.dayOfMonthAnnual = 29 }.compile()
        #expect(leap.rrule?.rrule == "RRULE:FREQ=YEARLY;INTERVAL=1;BYMONTH=2;BYMONTHDAY=28,29;BYSETPOS=-1")
    }
}
