import Foundation
import Messaging
import Support
import Testing

/// `chronirctl schedule expand` as a process: one output line per input line, in order.
@Suite("chronirctl schedule expand")
struct ExpandCommandTests {
    /// The output lines, the exit status and standard error of one run on `input`.
    func run(_ input: String) throws -> (lines: [String], status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = TestProcess.binDirectory.appendingPathComponent("chronirctl")
        process.arguments = ["schedule", "expand"]
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let writer = Thread {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        return (lines, process.terminationStatus, String(decoding: errors, as: UTF8.self))
    }

    @Test("good lines, bad lines and bad schedules each get exactly one answer, in order")
    func mixed() throws {
        let good = #"{"schedule":{"type":"monthly","dayOfMonth":1,"monthlyType":"fixed","timeOfDay":"09:00","timezone":"Asia/Manila","startDate":"2026-02-06T00:00:00Z","endDate":null},"after":"2026-02-06T00:00:00Z","count":3}"#
        let ended = #"{"schedule":{"type":"custom","intervalDays":1,"timeOfDay":"09:00","timezone":"UTC","startDate":"2026-01-01T00:00:00Z","endDate":"2026-01-02T09:00:00Z"},"after":"2025-12-01T00:00:00Z","count":5}"#
        let bad = #"{"schedule":{"type":"weekly","daysOfWeek":[],"timeOfDay":"09:00","timezone":"UTC","startDate":"2026-01-01T00:00:00Z"},"after":"2026-01-01T00:00:00Z","count":2}"#
        var lines: [String] = []
        for k in 0..<1_000 { lines.append([good, "{{nope", bad, ended][k % 4]) }
        let (out, status, stderr) = try run(lines.joined(separator: "\n") + "\n")
        // Every line answered, and the failures counted at the end.
        #expect(status == 1)
        #expect(stderr == "500 of 1000 inputs failed\n", "\(stderr)")
        #expect(out.count == 1_000)
        for (k, line) in out.enumerated() {
            let v = try JSONCoding.decoder().decode(JSONValue.self, from: Data(line.utf8))
            switch k % 4 {
            case 0: #expect(v["occurrences"] == .array([.string("2026-03-01T01:00:00Z"), .string("2026-04-01T01:00:00Z"), .string("2026-05-01T01:00:00Z")]))
            case 1: #expect(v["error"]?["code"]?.stringValue == "CA016")
            case 2:
                #expect(v["error"]?["code"]?.stringValue == "CA008")
                #expect(v["error"]?["message"]?.stringValue?.contains("schedule.daysOfWeek") == true)
            default: #expect(v["occurrences"] == .array([.string("2026-01-01T09:00:00Z"), .string("2026-01-02T09:00:00Z")]))
            }
        }
    }

    static let good = #"{"schedule":{"type":"custom","intervalDays":1,"timeOfDay":"09:00","timezone":"UTC","startDate":"2026-01-01T00:00:00Z","endDate":null},"after":"2026-01-01T00:00:00Z","count":2}"#

    @Test("only good lines: exit 0, nothing on standard error")
    func allGood() throws {
        let (out, status, stderr) = try run([Self.good, Self.good, Self.good].joined(separator: "\n") + "\n")
        #expect(status == 0)
        #expect(stderr.isEmpty, "\(stderr)")
        #expect(out.count == 3)
        for line in out {
            let v = try JSONCoding.decoder().decode(JSONValue.self, from: Data(line.utf8))
            #expect(v["occurrences"] == .array([.string("2026-01-01T09:00:00Z"), .string("2026-01-02T09:00:00Z")]), "\(line)")
        }
    }

    @Test("one failing line of three: the good ones answered, exit 1, \"1 of 3 inputs failed\"")
    func oneFails() throws {
        let (out, status, stderr) = try run([Self.good, "", Self.good].joined(separator: "\n") + "\n")
        #expect(status == 1)
        #expect(stderr == "1 of 3 inputs failed\n", "\(stderr)")
        try #require(out.count == 3, "\(out)")
        let values = try out.map { try JSONCoding.decoder().decode(JSONValue.self, from: Data($0.utf8)) }
        #expect(values[0]["occurrences"] != nil && values[2]["occurrences"] != nil, "\(out)")
        #expect(values[1]["error"]?["code"]?.stringValue == "CA016", "\(out)")
    }

    @Test("no input: exit 0, no output")
    func empty() throws {
        let (out, status, stderr) = try run("")
        #expect(status == 0 && out.isEmpty && stderr.isEmpty, "\(out) \(stderr)")
    }
}
