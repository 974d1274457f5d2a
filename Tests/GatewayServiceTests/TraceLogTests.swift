import AsyncHTTPClient
import Foundation
import NIOCore
import Messaging
import Support
@testable import SuiteSupport
import Testing

/// Trace ids in logs: a request sent with a `traceparent` leaves the gateway's access line with
/// that trace id, and, at debug level, the alarm service's lines for the request it handled.
/// The services run as processes here (their log is their standard error, JSON lines), exporting
/// their spans over OTLP to a local receiver and to span files at once: the trace is whole in both.
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
        let receiver = OTLPReceiver()
        try await receiver.start()
        let spanDir = FileManager.default.temporaryDirectory.appendingPathComponent("tracelog-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: spanDir, withIntermediateDirectories: true)
        defer { receiver.stop(); try? FileManager.default.removeItem(at: spanDir) }
        // OTLP and the span file together, batches every 200 ms.
        func tracing(_ name: String) -> [String: String] {
            ["OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "200",
             "CHRONIR_TRACE_FILE": spanDir.appendingPathComponent("\(name).jsonl").path]
        }
        var processes: [TestProcess] = []
        do {
            for (name, level) in [("accounts", "info"), ("alarms", "debug")] {
                processes.append(try TestProcess(name, environment: suite.environment(for: name, extra: [
                    "CHRONIR_LOG_FORMAT": "json", "CHRONIR_LOG_LEVEL": level,
                    "CHRONIR_OPS_PORT": name == "alarms" ? String(alarmsOps) : "0"].merging(tracing(name)) { a, _ in a }),
                    label: "tracelog-\(name)"))
            }
            let gateway = try TestProcess("gateway", environment: suite.environment(for: "gateway", extra: [
                "CHRONIR_LOG_FORMAT": "json", "CHRONIR_LOG_LEVEL": "info", "CHRONIR_HTTP_PORT": String(httpPort)]
                .merging(tracing("gateway")) { a, _ in a }), label: "tracelog-gateway")
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
            // The trace over OTLP: the gateway's server span and the alarm service's span of the
            // request, same trace id, in the same parent chain as the files hold.
            // Each service exports in its own batches: wait for the two spans named below, not for
            // any span of each service (the alarm service's publish span can arrive first).
            let exported = await eventually(timeout: .seconds(10)) {
                let spans = receiver.spans.filter { $0.traceId == traceID }
                return spans.contains { $0.service == "gateway" && $0.kind == 2 }
                    && spans.contains { $0.service == "alarms" && $0.name.hasPrefix("alarms.create") }
            }
            let otlp = receiver.spans.filter { $0.traceId == traceID }
            #expect(exported, "spans received over OTLP: \(receiver.spans.map { "\($0.service) \($0.name)" })")
            #expect(receiver.refused.withLock { $0 } == 0)
            #expect(otlp.contains { $0.service == "gateway" && $0.kind == 2 && $0.parentSpanId == "00f067aa0ba902b7" }, "\(otlp)")
            #expect(otlp.contains { $0.service == "alarms" && $0.name.hasPrefix("alarms.create") }, "\(otlp)")
            // The span files hold the same spans (each file is flushed every 250 ms).
            func inFiles() -> Set<String> {
                let files = (try? FileManager.default.contentsOfDirectory(atPath: spanDir.path)) ?? []
                return Set(files.flatMap { file in
                    ((try? String(contentsOf: spanDir.appendingPathComponent(file), encoding: .utf8)) ?? "").split(separator: "\n")
                        .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                        .filter { $0["traceId"] as? String == traceID }.compactMap { $0["spanId"] as? String }
                })
            }
            func viaOTLPNow() -> Set<String> { Set(receiver.spans.filter { $0.traceId == traceID }.map(\.spanId)) }
            let same = await eventually(timeout: .seconds(5)) { inFiles() == viaOTLPNow() }
            let viaOTLP = viaOTLPNow()
            #expect(same, "the span files and OTLP hold the same spans: files \(inFiles().count), OTLP \(viaOTLP.count)")
            print("trace \(traceID): \(access.count) access line(s) in the gateway's log, \(handled.count) line(s) in alarms', "
                  + "\(viaOTLP.count) spans over OTLP, \(inFiles().count) in the span files")
        } catch {
            for p in processes { _ = await p.terminate() }
            await suite.shutdown()
            throw error
        }
        for p in processes { _ = await p.terminate() }
        await suite.shutdown()
    }
}
