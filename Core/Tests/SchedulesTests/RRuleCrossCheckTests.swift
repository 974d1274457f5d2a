import Foundation
import Wire
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
        // Core/Tests/SchedulesTests/this file → the repository.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        // The test venv's Python (scripts/test.sh exports CHRONIR_TEST_PYTHON, with
        // python-dateutil); python3 from PATH only when unset, and then dateutil must be there:
        // a missing dateutil fails the test with a clear message, it never passes unchecked.
        let configured = ProcessInfo.processInfo.environment["CHRONIR_TEST_PYTHON"].flatMap { $0.isEmpty ? nil : $0 }
        let python = configured ?? "python3 from PATH (CHRONIR_TEST_PYTHON unset)"
        func runPython(_ arguments: [String]) throws -> (status: Int32, output: String) {
            let process = Process()
            if let configured {
                process.executableURL = URL(fileURLWithPath: configured)
                process.arguments = arguments
            } else {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["python3"] + arguments
            }
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, output)
        }
        let probe = try runPython(["-c", "import dateutil.rrule"])
        try #require(probe.status == 0, """
            python-dateutil cannot be imported by \(python): run the tests with `make test` (scripts/test.sh makes a venv \
            with it and exports CHRONIR_TEST_PYTHON), or point CHRONIR_TEST_PYTHON at a Python that has it. \(probe.output.prefix(2000))
            """)
        let (status, output) = try runPython([root.appendingPathComponent("scripts/rrule_crosscheck.py").path, file.path])
        #expect(status == 0, "\(python): \(output.prefix(4000))")
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
