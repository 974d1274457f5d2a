import Foundation
import Hummingbird
import Messaging
import ServiceKit

/// `GET /healthz`: every service's health, asked over ZeroMQ; 503 when one is down (an overview,
/// not a probe). `GET /livez` and `GET /readyz` are the gateway's own: it runs; it can serve
/// (its consumers are not stopped and it is not shutting down).
enum HealthRoutes {
    struct Entry: Codable, Sendable {
        var service: String
        var status: String
        var instance: String?
        var detail: String?
    }

    struct Body: Codable, Sendable {
        var status: String
        var services: [Entry]
    }

    static func add(to router: Router<GatewayContext>, gateway g: Gateway, health: HealthChecks, runtime: ServiceRuntime) {
        router.get("/livez") { _, _ in
            try HTTPSupport.json(["status": "alive", "service": runtime.name, "instance": runtime.instance, "version": runtime.version])
        }
        router.get("/readyz") { _, _ in
            let report = await health.report(runtime: runtime)
            return try HTTPSupport.json(report, status: report.status == "ok" ? .ok : .serviceUnavailable)
        }
        router.get("/healthz") { _, _ in
            let entries = await withTaskGroup(of: Entry.self) { group in
                for (name, client) in g.clients.all {
                    group.addTask {
                        do {
                            let report = try await client.call(SystemMethods.Health.self, Empty(), timeout: .seconds(1))
                            let failing = report.checks.filter { $0.value != "ok" }.map { "\($0.key): \($0.value)" }.sorted()
                            return Entry(service: name.rawValue, status: report.status, instance: report.instance,
                                         detail: failing.isEmpty ? nil : failing.joined(separator: "; "))
                        } catch {
                            return Entry(service: name.rawValue, status: "down", instance: nil, detail: "\(error)")
                        }
                    }
                }
                var all: [Entry] = []
                for await e in group { all.append(e) }
                return all.sorted { $0.service < $1.service }
            }
            let ok = entries.allSatisfy { $0.status == "ok" }
            return try HTTPSupport.json(Body(status: ok ? "ok" : "degraded", services: entries), status: ok ? .ok : .serviceUnavailable)
        }
    }
}
