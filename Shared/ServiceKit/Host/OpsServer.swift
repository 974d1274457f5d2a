import Foundation
import Hummingbird
import Logging
import Messaging
import NIOCore
import Prometheus
import ServiceLifecycle

/// The operations HTTP endpoint of a service (`CHRONIR_OPS_PORT`, 0 = off):
/// `GET /metrics` (Prometheus text format), `GET /livez` (the process answers) and
/// `GET /readyz` (200 or 503 with the checks; `/healthz` too).
public enum OpsServer {
    /// Builds the server as a ``Service``; nil when disabled.
    public static func make(runtime: ServiceRuntime, health: HealthChecks, defaultPort: Int) throws -> (any Service)? {
        let port = runtime.config.ops.port ?? defaultPort
        guard port != 0 else { return nil }
        let host = runtime.config.ops.host
        let idle = runtime.config.ops.idleTimeout
        let router = Router()
        let registry = runtime.metricsRegistry
        router.get("/metrics") { _, _ -> Response in
            var buffer: [UInt8] = []
            registry.emit(into: &buffer)
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                            body: .init(byteBuffer: ByteBuffer(bytes: buffer)))
        }
        // Readiness: the database answers, no consumer is stopped, migrations are done (the parts
        // run only after them), and shutdown has not begun. `/healthz` is the same answer, for
        // probes written before `/readyz`.
        for path in ["/readyz", "/healthz"] {
            router.get(RouterPath(path)) { _, _ -> Response in
                let report = await health.report(runtime: runtime)
                return json(report, status: report.status == "ok" ? .ok : .serviceUnavailable)
            }
        }
        // Liveness: the process answers (restart it when this fails, not when readiness does).
        router.get("/livez") { _, _ -> Response in
            json(Liveness(service: runtime.name, instance: runtime.instance, version: runtime.version,
                          uptimeSeconds: Date().timeIntervalSince(runtime.startedAt)), status: .ok)
        }
        @Sendable func json(_ value: some Encodable, status: HTTPResponse.Status) -> Response {
            let body = (try? JSONCoding.encode(value)) ?? Data()
            return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        var logger = runtime.logs.logger("ops-http")
        logger.logLevel = .warning
        // An idle or half-sent connection is closed after `CHRONIR_OPS_IDLE_TIMEOUT` (30 s): the
        // port answers scrapes and probes, each one short request (issue 74: no peer holds a
        // connection for ever).
        return Application(router: router, server: .http1(configuration: .init(idleTimeout: TimeAmount(idle))),
                           configuration: .init(address: .hostname(host, port: port), serverName: runtime.name),
                           eventLoopGroupProvider: .shared(runtime.eventLoopGroup), logger: logger)
    }
}

/// What `GET /livez` answers.
struct Liveness: Codable, Sendable {
    var status = "alive"
    var service: String
    var instance: String
    var version: String
    var uptimeSeconds: Double
}
