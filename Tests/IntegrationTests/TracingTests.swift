import AccountsService
import AlarmsService
import Foundation
import GatewayService
import SchedulerService
import Support
import Testing

/// One trace follows an HTTP request through the gateway, the alarms service, its outbox and
/// the scheduler; `chronirctl trace` prints it from the span files.
@Suite("Tracing")
struct TracingTests {
    @Test("a creation's trace spans gateway → alarms → outbox → scheduler and chronirctl trace prints it")
    func creationTrace() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("traces-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        func file(_ s: String) -> String { dir.appendingPathComponent("\(s).jsonl").path }
        try await withTestSuite(label: "trace", start: { s in
            try s.start("accounts", migrations: AccountsService.migrations, extra: ["CHRONIR_TRACE_FILE": file("accounts")], build: AccountsService.build)
            try s.start("alarms", migrations: AlarmsService.migrations, extra: ["CHRONIR_TRACE_FILE": file("alarms")], build: AlarmsService.build)
            try s.start("scheduler", migrations: SchedulerService.migrations,
                        extra: ["CHRONIR_TRACE_FILE": file("scheduler"), "CHRONIR_SCHEDULER_PARTITIONS": "8", "CHRONIR_SCHEDULER_PUSH_TO": "alarms"],
                        build: SchedulerService.build)
            try s.start("gateway", migrations: nil, extra: ["CHRONIR_TRACE_FILE": file("gateway")]) { runtime, _, _ in
                try GatewayService.build(runtime: runtime) { port in s.gatewayPort.withLock { $0 = port } }
            }
        }) { s in
            let u = try await s.signup("Tracer")
            let traceId = (0..<32).map { _ in String("0123456789abcdef".randomElement()!) }.joined()
            let r = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "Traced", "schedule": scheduleJSON()],
                                        headers: ["traceparent": "00-\(traceId)-00f067aa0ba902b7-01"])
            #expect(r.status == 201)
            // The scheduler applies the upserted event within the same trace.
            let files = ["gateway", "alarms", "scheduler"].map(file)
            var output = ""
            let complete = await eventually(timeout: .seconds(10), every: .milliseconds(300)) {
                let process = Process()
                process.executableURL = TestProcess.binDirectory.appendingPathComponent("chronirctl")
                process.arguments = ["trace", traceId, "--files"] + files
                let pipe = Pipe()
                process.standardOutput = pipe
                process.standardError = pipe
                guard (try? process.run()) != nil else { return false }
                output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                // Each service flushes its span file on its own cadence: wait for all of them.
                return output.contains("scheduler alarms.alarm-upserted process") && output.contains("gateway HTTP POST")
            }
            #expect(complete, "\(output)")
            #expect(output.contains("gateway HTTP POST"), "\(output)")
            #expect(output.contains("alarms alarms.create process"), "\(output)")
            #expect(output.contains("alarms alarms.alarm-upserted publish"), "\(output)")
            // Children are indented under their parents.
            let lines = output.split(separator: "\n").dropFirst()
            #expect(lines.count >= 4)
        }
    }
}
