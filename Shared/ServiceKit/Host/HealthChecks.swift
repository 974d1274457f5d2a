import Foundation
import Messaging
import Persistence
import ServiceLifecycle
import Synchronization

/// The checks a service runs when asked for its health (`system.health`, `GET /healthz`).
///
/// The report is the service's readiness (`GET /readyz`, the gateway's `/healthz`): besides the
/// checks added, `serving` says `starting` until the parts run and `draining` from the moment
/// shutdown begins, so a balancer stops sending work before the service stops taking it.
public final class HealthChecks: Sendable {
    public typealias Check = @Sendable () async -> String
    private let checks = Mutex<[(String, Check)]>([])
    private let checkedDatabase = Mutex<Database?>(nil)
    private let phase = Mutex("starting")

    /// The parts run: ready once the checks pass.
    public func serving() { phase.withLock { $0 = "ok" } }

    /// Shutdown began: not ready from now on.
    public func draining() { phase.withLock { $0 = "draining" } }

    /// The service's database, once ``addDatabase(_:)`` named it.
    public var database: Database? { checkedDatabase.withLock { $0 } }

    public init() {}

    /// Adds a named check returning `ok` or a short reason.
    public func add(_ name: String, _ check: @escaping Check) {
        checks.withLock { $0.append((name, check)) }
    }

    /// Adds a check that the database answers within a second.
    public func addDatabase(_ database: Database) {
        checkedDatabase.withLock { $0 = database }
        add("database") {
            do {
                return try await withThrowingTaskGroup(of: String.self) { group in
                    group.addTask {
                        try await database.query("SELECT 1")
                        return "ok"
                    }
                    group.addTask {
                        try await Task.sleep(for: .seconds(1))
                        return "timeout"
                    }
                    let first = try await group.next() ?? "timeout"
                    group.cancelAll()
                    return first
                }
            } catch {
                return "error: \(error)"
            }
        }
    }

    /// Runs every check.
    public func report(runtime: ServiceRuntime) async -> HealthReport {
        var results: [String: String] = ["serving": phase.withLock { $0 }]
        for (name, check) in checks.withLock({ $0 }) { results[name] = await check() }
        let ok = results.values.allSatisfy { $0 == "ok" }
        return HealthReport(service: runtime.name, instance: runtime.instance, status: ok ? "ok" : "degraded",
                            uptimeSeconds: Date().timeIntervalSince(runtime.startedAt), checks: results, version: runtime.version)
    }
}

/// Marks the service serving once the group runs its parts, and draining as soon as a graceful
/// shutdown begins (listed last, it is the first part told to stop).
struct ReadinessMarker: Service {
    let health: HealthChecks

    func run() async throws {
        health.serving()
        try? await gracefulShutdown()
        health.draining()
    }
}
