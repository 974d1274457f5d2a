import Foundation
import Hummingbird
import Messaging

/// `GET /healthz`: every service's health, asked over ZeroMQ; 503 when one is down.
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

    static func add(to router: Router<GatewayContext>, gateway g: Gateway) {
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
