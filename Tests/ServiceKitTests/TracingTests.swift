import AccountsService
import NotificationsService
import AlarmsService
import Foundation
import Messaging
import GatewayService
import SchedulerService
import Support
@testable import SuiteSupport
import Testing

/// One trace follows an HTTP request through the gateway, the alarms service, its outbox and
/// the scheduler; `chronirctl trace` prints it from the span files.
@Suite("Tracing")
struct TracingTests {
    @Test("a creation's trace spans gateway → alarms → outbox → scheduler; the later fire is a sampled trace linked to it that ends at the live stream")
    func creationTrace() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("traces-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        func file(_ s: String) -> String { dir.appendingPathComponent("\(s).jsonl").path }
        // New traces are not recorded (ratio 0): only the request's sampled traceparent, and
        // what it causes, reaches the files.
        func env(_ s: String) -> [String: String] { ["CHRONIR_TRACE_FILE": file(s), "CHRONIR_TRACE_SAMPLE": "0"] }
        try await withTestSuite(label: "trace", start: { s in
            try s.start("accounts", migrations: AccountsService.migrations, extra: env("accounts"), build: AccountsService.build)
            try s.start("alarms", migrations: AlarmsService.migrations, extra: env("alarms"), build: AlarmsService.build)
            try s.start("scheduler", migrations: SchedulerService.migrations,
                        extra: env("scheduler").merging(["CHRONIR_SCHEDULER_PARTITIONS": "8", "CHRONIR_SCHEDULER_PUSH_TO": "notifications,alarms"]) { $1 },
                        build: SchedulerService.build)
            try s.start("notifications", migrations: NotificationsService.migrations, extra: env("notifications"), build: NotificationsService.build)
            try s.start("gateway", extra: env("gateway")) { runtime, _ in
                try GatewayService.build(runtime: runtime, config: GatewayConfig(environment: runtime.environment)) { port in s.gatewayPort.withLock { $0 = port } }
            }
        }) { s in
            let u = try await s.signup("Tracer")
            let live = SSEClient(http: s.http, url: try await s.gatewayURL() + "/v1/me/events", token: u.token)
            defer { Task { await live.close() } }
            #expect(await eventually { live.connected.withLock { $0 } })
            let traceId = (0..<32).map { _ in String("0123456789abcdef".randomElement()!) }.joined()
            let r = try await s.request(.POST, "/v1/alarms", token: u.token,
                                        json: ["title": "Traced", "schedule": scheduleJSON("custom", day: 1)],
                                        headers: ["traceparent": "00-\(traceId)-00f067aa0ba902b7-01"])
            #expect(r.status == 201)
            let id = try #require(r.json["id"]?.stringValue, "\(r.text)")
            let files = ["accounts", "gateway", "alarms", "scheduler", "notifications"].map(file)
            var output = ""
            func trace(until: @escaping (String) -> Bool, timeout: Duration) async -> Bool {
                await eventually(timeout: timeout, every: .milliseconds(300)) {
                    let process = Process()
                    process.executableURL = TestProcess.binDirectory.appendingPathComponent("chronirctl")
                    process.arguments = ["trace", traceId, "--files"] + files
                    let pipe = Pipe()
                    process.standardOutput = pipe
                    process.standardError = pipe
                    guard (try? process.run()) != nil else { return false }
                    output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                    process.waitUntilExit()
                    return until(output)
                }
            }
            // The scheduler applies the upserted event within the same trace. Each service
            // flushes its span file on its own cadence (a CI run read the scheduler's before the
            // alarms service's): wait until every expected span is there.
            let expected = ["gateway HTTP POST", "alarms alarms.create process",
                            "alarms alarms.alarm-upserted publish", "scheduler alarms.alarm-upserted process"]
            let complete = await trace(until: { out in expected.allSatisfy { out.contains($0) } }, timeout: .seconds(15))
            #expect(complete, "\(output)")
            for span in expected { #expect(output.contains(span), "\(output)") }
            // Children are indented under their parents.
            #expect(output.split(separator: "\n").dropFirst().count >= 4)

            // When its timer comes due the alarm fires in a new trace linked to this one, recorded
            // although new traces are not sampled, and its event reaches the alarms service. The
            // timer is moved to 2 s from now (the link is the alarm's, kept in the scheduler's read
            // model, not the timer row's): the next whole minute was up to 68 s of waiting.
            _ = try await s.dueIn(id, seconds: 2)
            let fired = await trace(until: { $0.contains("alarms scheduler.alarm-fired process") }, timeout: .seconds(30))
            #expect(fired, "\(output)")
            let linked = output.split(separator: "\n").filter { $0.hasPrefix("↪") }
            #expect(linked.contains { $0.contains("scheduler scheduler fire") }, "\(output)")
            #expect(output.contains("scheduler scheduler.alarm-fired publish"), "\(output)")
            // The fire's trace goes on through notifications to the user's live connection.
            let delivered = await trace(until: { $0.contains("gateway notifications.notification-created process") }, timeout: .seconds(15))
            #expect(delivered, "\(output)")
            #expect(output.contains("notifications scheduler.alarm-fired process"), "\(output)")
            #expect(await eventually { live.events.withLock { $0.count } == 1 })
            // Nothing else was recorded: the signup was a new, unsampled trace.
            let all = try files.map { try String(contentsOfFile: $0, encoding: .utf8) }.joined()
            #expect(!all.contains("/v1/auth/signup"), "an unsampled root span was recorded")
        }
    }
}
