import Foundation
import Support
import Testing

/// `chronirctl trace <id>` with no flags reads every span file of `CHRONIR_TRACE_DIR` (or
/// `.run/traces`, where `make run` writes one per process).
@Suite("chronirctl trace")
struct TraceCommandTests {
    func run(_ arguments: [String], environment: [String: String], directory: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = TestProcess.binDirectory.appendingPathComponent("chronirctl")
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "CHRONIR_TRACE_FILE")
        env.removeValue(forKey: "CHRONIR_TRACE_DIR")
        env.merge(environment) { $1 }
        process.environment = env
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func span(_ trace: String, _ id: String, parent: String?, service: String, name: String, start: UInt64) -> String {
        let parentField = parent.map { #""parentSpanId":"\#($0)","# } ?? ""
        return #"{"traceId":"\#(trace)","spanId":"\#(id)",\#(parentField)"name":"\#(name)","kind":"server","service":"\#(service)","instance":"\#(service)-1","startUnixNano":\#(start),"endUnixNano":\#(start + 2_000_000),"attributes":{},"links":[],"events":[]}"#
    }

    @Test("with no flags it reads every *.jsonl of CHRONIR_TRACE_DIR, or of .run/traces under the working directory")
    func defaultFiles() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("chronir-trace-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let traces = root + "/.run/traces"
        try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: true)
        let trace = "4bf92f3577b34da6a3ce929d0e0e4736"
        try (Self.span(trace, "00f067aa0ba902b7", parent: nil, service: "gateway", name: "HTTP POST /v1/alarms", start: 1_000_000_000) + "\n")
            .write(toFile: traces + "/gateway.jsonl", atomically: true, encoding: .utf8)
        try (Self.span(trace, "1111111111111111", parent: "00f067aa0ba902b7", service: "alarms", name: "alarms.create process", start: 1_000_500_000)
             + "\n" + Self.span("0123456789abcdef0123456789abcdef", "2222222222222222", parent: nil, service: "alarms", name: "other", start: 5) + "\n")
            .write(toFile: traces + "/alarms.jsonl", atomically: true, encoding: .utf8)

        let fromRun = try run(["trace", trace], environment: [:], directory: root)
        #expect(fromRun.status == 0, "\(fromRun.output)")
        #expect(fromRun.output.contains("trace \(trace): 2 span(s)") && fromRun.output.contains("alarms.create process"), "\(fromRun.output)")

        let fromVariable = try run(["trace", trace], environment: ["CHRONIR_TRACE_DIR": traces], directory: NSTemporaryDirectory())
        #expect(fromVariable.status == 0 && fromVariable.output.contains("2 span(s)"), "\(fromVariable.output)")

        // Compose: CHRONIR_TRACE_FILE is the replicas' pattern, the directory holds their files.
        let compose = try run(["trace", trace], environment: ["CHRONIR_TRACE_DIR": traces, "CHRONIR_TRACE_FILE": traces + "/{instance}.jsonl"],
                              directory: NSTemporaryDirectory())
        #expect(compose.status == 0 && compose.output.contains("2 span(s)"), "\(compose.output)")

        let nothing = try run(["trace", trace], environment: [:], directory: NSTemporaryDirectory())
        #expect(nothing.status != 0 && nothing.output.contains("no span files"), "\(nothing.output)")
    }
}
