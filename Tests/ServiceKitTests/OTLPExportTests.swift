import AccountsService
import AlarmsService
import Foundation
import GatewayService
import Hummingbird
import Logging
import SchedulerService
import Support
import Synchronization
@testable import SuiteSupport
import Testing

/// With `OTEL_EXPORTER_OTLP_ENDPOINT` set, spans leave each service over OTLP/HTTP with JSON
/// bodies (`OTLPSpanExporter`) to a collector — here a local HTTP server that records what the
/// real protocol sends.
@Suite("OTLP export")
struct OTLPExportTests {
    @Test("one trace reaches the collector from gateway, alarms and scheduler, with messaging attributes")
    func export() async throws {
        let received = Mutex<[(contentType: String, body: Data)]>([])
        let router = Router()
        router.post("/v1/traces") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 16 << 20)
            received.withLock { $0.append((request.headers[.contentType] ?? "", Data(buffer: body))) }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "{}")))
        }
        let port = freePort()
        let collector = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
                                    logger: Logger(label: "collector", factory: { _ in SwiftLogNoOpLogHandler() }))
        let server = Task { try await collector.runService() }
        defer { server.cancel() }
        let otlp = ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:\(port)", "OTEL_BSP_SCHEDULE_DELAY": "200"]
        try await withTestSuite(label: "otlp", start: { s in
            try s.start("accounts", migrations: AccountsService.migrations, build: AccountsService.build)
            try s.start("alarms", migrations: AlarmsService.migrations, extra: otlp, build: AlarmsService.build)
            try s.start("scheduler", migrations: SchedulerService.migrations,
                        extra: otlp.merging(["CHRONIR_SCHEDULER_PARTITIONS": "8", "CHRONIR_SCHEDULER_PUSH_TO": "alarms"]) { $1 },
                        build: SchedulerService.build)
            try s.start("gateway", extra: otlp) { runtime, _ in
                try GatewayService.build(runtime: runtime, config: GatewayConfig(environment: runtime.environment)) { port in s.gatewayPort.withLock { $0 = port } }
            }
        }) { s in
            let u = try await s.signup("Exporter")
            let traceId = (0..<32).map { _ in String("0123456789abcdef".randomElement()!) }.joined()
            // OTLP/JSON writes ids in lower-case hex.
            let traceBytes = Data("\"traceId\":\"\(traceId)\"".utf8)
            let r = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "Exported", "schedule": scheduleJSON()],
                                        headers: ["traceparent": "00-\(traceId)-00f067aa0ba902b7-01"])
            #expect(r.status == 201)
            // Each export names its service instance in the resource; the trace id travels as hex.
            func exported(by instance: String) -> [Data] {
                received.withLock { $0.map(\.body).filter { $0.range(of: Data(instance.utf8)) != nil && $0.range(of: traceBytes) != nil } }
            }
            let all = await eventually(timeout: .seconds(15), every: .milliseconds(200)) {
                ["gateway-test", "alarms-test", "scheduler-test"].allSatisfy { !exported(by: $0).isEmpty }
            }
            #expect(all, "the trace did not reach the collector from every service")
            let scheduler = exported(by: "scheduler-test").reduce(Data(), +)
            for text in ["alarms.alarm-upserted process", "messaging.system", "zeromq", "messaging.message.id", "messaging.destination.name"] {
                #expect(scheduler.range(of: Data(text.utf8)) != nil, "no \(text) in the scheduler's export")
            }
            #expect(exported(by: "gateway-test").reduce(Data(), +).range(of: Data("HTTP POST".utf8)) != nil)
            #expect(received.withLock { $0.allSatisfy { $0.contentType == "application/json" } })
            // Every body is an OTLP/JSON ExportTraceServiceRequest a collector accepts.
            #expect(received.withLock { $0.allSatisfy { OTLPReceiver.parse($0.body) != nil } })
        }
    }
}
