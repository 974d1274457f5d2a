import ArgumentParser
import Foundation
import Messaging
import Schedules

/// `chronirctl schedule …`: the recurrence engine from the command line.
struct ScheduleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedule",
        abstract: "Expand schedules with the engine the services use.",
        subcommands: [ScheduleExpand.self, ScheduleNext.self]
    )
}

/// Reads JSON lines `{"schedule": {...}, "after": "<RFC 3339>", "count": N}` from standard
/// input and writes one JSON line per input line, in order: `{"occurrences": [...]}` (UTC,
/// seconds, `Z`) or `{"error": {"code": ..., "message": ...}}`. Never stops early; when any
/// line failed, ends with `N of M inputs failed` on standard error and exit status 1.
struct ScheduleExpand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "expand",
        abstract: "Expand JSON lines of {schedule, after, count} read from stdin."
    )

    @Option(help: "Most occurrences per line.")
    var maxCount = 100_000

    struct Line: Decodable {
        var schedule: Schedule
        var after: Date
        var count: Int
    }

    struct Output: Encodable {
        var occurrences: [String]?
        var error: ServiceError?
    }

    func run() throws {
        var out = Data()
        out.reserveCapacity(1 << 16)
        var total = 0
        var failed = 0
        while let text = readLine(strippingNewline: true) {
            let (line, ok) = ScheduleExpand.evaluate(text, maxCount: maxCount)
            total += 1
            if !ok { failed += 1 }
            out.append(line)
            out.append(0x0A)
            if out.count >= 1 << 16 {
                FileHandle.standardOutput.write(out)
                out.removeAll(keepingCapacity: true)
            }
        }
        FileHandle.standardOutput.write(out)
        if failed > 0 {
            FileHandle.standardError.write(Data("\(failed) of \(total) inputs failed\n".utf8))
            throw ExitCode(1)
        }
    }

    /// The output line for one input line.
    static func expand(_ text: String, maxCount: Int) -> Data {
        evaluate(text, maxCount: maxCount).line
    }

    /// The output line for one input line, and whether it holds occurrences (not an error).
    static func evaluate(_ text: String, maxCount: Int) -> (line: Data, ok: Bool) {
        let result: Output
        do {
            let line = try parse(text)
            guard line.count >= 0, line.count <= maxCount else {
                throw ServiceError(.validationFailed, "count must be 0...\(maxCount)")
            }
            let compiled: CompiledSchedule
            do {
                compiled = try line.schedule.compile()
            } catch let e as ScheduleError {
                throw ServiceError(.scheduleInvalid, e.message)
            }
            result = Output(occurrences: compiled.occurrences(after: line.after, count: line.count).map(ISOTime.formatSeconds))
        } catch let e as ServiceError {
            result = Output(error: e)
        } catch {
            result = Output(error: ServiceError(.validationFailed, "\(error)"))
        }
        guard let line = try? JSONCoding.encode(result) else {
            return (Data(#"{"error":{"code":"CA023","message":"internal error"}}"#.utf8), false)
        }
        return (line, result.error == nil)
    }

    static func parse(_ text: String) throws -> Line {
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ServiceError(.validationFailed, "empty line: expected {\"schedule\": …, \"after\": …, \"count\": …}")
        }
        do {
            return try JSONCoding.decoder().decode(Line.self, from: Data(text.utf8))
        } catch let error as DecodingError {
            let message = JSONCoding.describe(error)
            if case .dataCorrupted(let ctx) = error, ctx.codingPath.isEmpty {
                throw ServiceError(.validationFailed, "line is not valid JSON")
            }
            throw ServiceError(message.hasPrefix("schedule") ? .scheduleInvalid : .validationFailed, message)
        }
    }
}

/// Prints the next occurrences of one schedule in local and UTC time, and its RRULE.
struct ScheduleNext: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "next",
        abstract: "Print the next occurrences of a schedule in local and UTC time."
    )

    @Option(help: "The schedule object as JSON.")
    var schedule: String

    @Option(help: "RFC 3339 instant to start after (default: now).")
    var after: String?

    @Option(help: "How many occurrences.")
    var count = 5

    func run() throws {
        let parsed: Schedule
        do {
            parsed = try JSONCoding.decoder().decode(Schedule.self, from: Data(schedule.utf8))
        } catch let error as DecodingError {
            throw ValidationError("CA008 schedule.\(JSONCoding.describe(error))")
        }
        let compiled: CompiledSchedule
        do {
            compiled = try parsed.compile()
        } catch let e as ScheduleError {
            throw ValidationError("CA008 \(e.message)")
        }
        var start = Date()
        if let after {
            guard let d = ISOTime.parse(after) else { throw ValidationError("--after must be an RFC 3339 instant") }
            start = d
        }
        let zone = compiled.timeZone
        let formatter = DateFormatter()
        formatter.timeZone = zone
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm EEE xxx"
        let occurrences = compiled.occurrences(after: start, count: count)
        if occurrences.isEmpty { print("no occurrence after \(ISOTime.formatSeconds(start))") }
        for o in occurrences {
            print("\(formatter.string(from: o)) (\(zone.identifier))   \(ISOTime.formatSeconds(o))")
        }
        if let rule = compiled.rrule {
            print(rule.dtstart)
            print(rule.rrule)
        }
    }
}
