import Logging
import Foundation
import Hummingbird
import Messaging
import ServiceKit

/// `GET /healthz`: every service's health, asked over ZeroMQ (a snapshot at most 2 s old, so an
/// anonymous flood costs no fan-out per request); 503 when one is down (an overview, not a
/// probe). `GET /livez` and `GET /readyz` are the gateway's own: it runs; it can serve (its
/// consumers are not stopped and it is not shutting down). All three answer anyone with
/// statuses only; the operator's token (`CHRONIR_OPS_TOKEN`) adds instances, versions, uptime
/// and why a check fails.
enum HealthRoutes {
    struct Entry: Codable, Sendable {
        var service: String
        var status: String
        var instance: String? = nil
        var detail: String? = nil
    }

    struct Body: Codable, Sendable {
        var status: String
        var services: [Entry]
    }

    static func add(to router: Router<GatewayContext>, gateway g: Gateway, health: HealthChecks, runtime: ServiceRuntime, opsToken: String?,
                    logger: Logger) {
        // No token: the statuses. The operator's: the details. Any other: 401, counted and
        // logged (``OpsRoutes/isOperator(_:_:token:gateway:logger:)``), so the token cannot be
        // guessed here in silence. Without CHRONIR_OPS_TOKEN there is no operator to be.
        let isOperator: @Sendable (Request, GatewayContext) async throws -> Bool = { request, context in
            guard let opsToken else { return false }
            return try await OpsRoutes.isOperator(request, context, token: opsToken, gateway: g, logger: logger)
        }
        router.get("/livez") { request, context in
            guard try await isOperator(request, context) else { return try HTTPSupport.json(["status": "alive"]) }
            return try HTTPSupport.json(["status": "alive", "service": runtime.name, "instance": runtime.instance, "version": runtime.version])
        }
        router.get("/readyz") { request, context in
            let full = try await isOperator(request, context)
            let report = await health.report(runtime: runtime)
            let status: HTTPResponse.Status = report.status == "ok" ? .ok : .serviceUnavailable
            guard full else { return try HTTPSupport.json(["status": report.status], status: status) }
            return try HTTPSupport.json(report, status: status)
        }
        let cache = HealthSnapshot(clients: g.clients)
        router.get("/healthz") { request, context in
            // Anonymous callers get each service's status from a snapshot at most two seconds
            // old (one fan-out however many ask); the operator's token adds instances and why a
            // check fails. Internal text never reaches anyone else.
            let full = try await isOperator(request, context)
            let entries = await cache.entries().map { e in full ? e : Entry(service: e.service, status: e.status) }
            let ok = entries.allSatisfy { $0.status == "ok" }
            return try HTTPSupport.json(Body(status: ok ? "ok" : "degraded", services: entries), status: ok ? .ok : .serviceUnavailable)
        }
    }

    /// Every service's health, asked over ZeroMQ at most once per `maxAge`; concurrent askers
    /// share the one round in flight.
    actor HealthSnapshot {
        let clients: GatewayClients
        let maxAge: Duration
        private var last: (at: ContinuousClock.Instant, entries: [Entry])?
        private var round: Task<[Entry], Never>?

        init(clients: GatewayClients, maxAge: Duration = .seconds(2)) {
            self.clients = clients
            self.maxAge = maxAge
        }

        func entries() async -> [Entry] {
            if let last, ContinuousClock.now - last.at < maxAge { return last.entries }
            if let round { return await round.value }
            let clients = self.clients
            let task = Task { await Self.ask(clients) }
            round = task
            let entries = await task.value
            last = (ContinuousClock.now, entries)
            round = nil
            return entries
        }

        static func ask(_ clients: GatewayClients) async -> [Entry] {
            await withTaskGroup(of: Entry.self) { group in
                for (name, client) in clients.all {
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
        }
    }
}
