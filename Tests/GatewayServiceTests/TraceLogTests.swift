import AsyncHTTPClient
import Foundation
import NIOCore
import Messaging
import Support
@testable import SuiteSupport
import Testing

/// Trace ids in logs: a request sent with a `traceparent` leaves the gateway's access line with
/// that trace id, and, at debug level, the alarm service's lines for the request it handled.
/// The services run as processes here (their log is their standard error, JSON lines).
@Suite("Trace ids in logs", .serialized)
struct TraceLogTests {
    /// The JSON log lines of `output` whose `trace_id` is `traceID`.
    static func lines(_ output: String, traceID: String) -> [[String: Any]] {
        output.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("{"), let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["trace_id"] as? String == traceID else { return nil }
            return object
        }
    }

    @Test("a request's traceparent reaches the gateway's access line and the alarm service's debug lines")
    func traceIDInLogs() async throws {
        let suite = try await TestSuite(label: "tracelog")
        let httpPort = freePort(), alarmsOps = freePort()
        var processes: [TestProcess] = []
        do {
            for (name, level) in [("accounts", "info"), ("alarms", "debug")] {
                processes.append(try TestProcess(name, environment: suite.environment(for: name, extra: [
                    "CHRONIR_LOG_FORMAT": "json", "CHRONIR_LOG_LEVEL": level,
                    "CHRONIR_OPS_PORT": name == "alarms" ? String(alarmsOps) : "0"]), label: "tracelog-\(name)"))
            }
            let gateway = try TestProcess("gateway", environment: suite.environment(for: "gateway", extra: [
                "CHRONIR_LOG_FORMAT": "json", "CHRONIR_LOG_LEVEL": "info", "CHRONIR_HTTP_PORT": String(httpPort)]), label: "tracelog-gateway")
            processes.append(gateway)
            suite.gatewayPort.withLock { $0 = httpPort }
            let ready = await eventually(timeout: .seconds(60)) {
                (try? await suite.request(.GET, "/readyz"))?.status == 200
            }
            try #require(ready, "the suite did not become healthy: \(gateway.output.suffix(800))")

            let user = try await suite.signup("Tracer", verified: false)
            let traceID = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
            let created = try await suite.request(.POST, "/v1/alarms", token: user.token,
                                                  json: ["title": "Descale the kettle", "schedule": scheduleJSON("monthly", day: 3)],
                                                  headers: ["traceparent": "00-\(traceID)-00f067aa0ba902b7-01"])
            #expect(created.status == 201, "\(created.text)")

            let alarms = processes[1]
            let found = await eventually(timeout: .seconds(10)) {
                !Self.lines(gateway.output, traceID: traceID).isEmpty && !Self.lines(alarms.output, traceID: traceID).isEmpty
            }
            let access = Self.lines(gateway.output, traceID: traceID).filter { $0["logger"] as? String == "access" }
            #expect(found && access.count == 1, "gateway lines: \(gateway.output.suffix(1500))")
            if let line = access.first {
                #expect(line["route"] as? String == "/v1/alarms" && line["status"] as? String == "201" && line["method"] as? String == "POST",
                        "\(line)")
                #expect(line["level"] as? String == "info" && line["span_id"] != nil && line["ms"] != nil, "\(line)")
            }
            let handled = Self.lines(alarms.output, traceID: traceID)
            #expect(handled.contains { $0["msg"] as? String == "request handled" && $0["type"] as? String == "alarms.create" },
                    "alarms lines with the trace id: \(handled)")
            // The same processes export what the alerts on the database and the outbox read
            // (deploy/prometheus/rules/chronir.alerts.yml): the probe answers, nothing waits.
            let metrics = try await suite.http.execute(HTTPClientRequest(url: "http://127.0.0.1:\(alarmsOps)/metrics"), timeout: .seconds(5))
            let text = String(buffer: try await metrics.body.collect(upTo: 1 << 22))
            #expect(text.contains("chronir_database_available 1"), "\(text.prefix(2000))")
            #expect(text.contains("chronir_outbox_backlog{stream=\"alarms\"}") && text.contains("chronir_outbox_oldest_unrelayed_seconds{stream=\"alarms\"}"),
                    "\(text.prefix(2000))")
            print("trace \(traceID): \(access.count) access line(s) in the gateway's log, \(handled.count) line(s) in alarms'")
        } catch {
            for p in processes { _ = await p.terminate() }
            await suite.shutdown()
            throw error
        }
        for p in processes { _ = await p.terminate() }
        await suite.shutdown()
    }
}
