import Foundation
import Hummingbird
import Logging
import Messaging
import NIOCore
import Prometheus
import ServiceLifecycle

/// The operations HTTP endpoint of a service (`CHRONIR_OPS_PORT`, 0 = off):
/// `GET /metrics` (Prometheus text format) and `GET /healthz` (200 or 503 with the checks).
public enum OpsServer {
    /// Builds the server as a ``Service``; nil when disabled.
    public static func make(runtime: ServiceRuntime, health: HealthChecks, defaultPort: Int) throws -> (any Service)? {
        let port = try runtime.environment.int("CHRONIR_OPS_PORT", defaultPort, in: 0...65535)
        guard port != 0 else { return nil }
        let host = runtime.environment.string("CHRONIR_OPS_HOST", "0.0.0.0")
        let router = Router()
        let registry = runtime.metricsRegistry
        router.get("/metrics") { _, _ -> Response in
            var buffer: [UInt8] = []
            registry.emit(into: &buffer)
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                            body: .init(byteBuffer: ByteBuffer(bytes: buffer)))
        }
        router.get("/healthz") { _, _ -> Response in
            let report = await health.report(runtime: runtime)
            let body = (try? JSONCoding.encode(report)) ?? Data()
            return Response(status: report.status == "ok" ? .ok : .serviceUnavailable,
                            headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        var logger = runtime.logs.logger("ops-http")
        logger.logLevel = .warning
        return Application(router: router, configuration: .init(address: .hostname(host, port: port), serverName: runtime.name),
                           eventLoopGroupProvider: .shared(runtime.eventLoopGroup), logger: logger)
    }
}
