import Foundation
import Persistence
import ServiceKit
import ServiceLifecycle
import Support
import Synchronization
import Testing

/// A stop always ends, or says where it is stuck. PostgresNIO 1.33 never answers a statement
/// written on a connection that closed under it, so a task can hold a pool lease for ever; a
/// service whose part holds one must still stop (the part is left behind after its patience,
/// the pool closed, or left behind after 5 s) instead of holding up its process's exit, or a
/// test run's teardown, for ever. And a test service whose stop does not end fails its test
/// with the phase it is in, instead of hanging the run.
@Suite("Shutdown ends")
struct ShutdownDeadlineTests {
    /// Whether the part holds its lease (shared by the part and the test).
    final class Held: Sendable {
        let flag = Atomic<Bool>(false)
        var holding: Bool { flag.load(ordering: .relaxed) }
    }

    /// Leases a connection and then waits, deaf to cancellation, for ever.
    struct LeaseHolder: Service {
        let database: Database
        let held: Held

        func run() async throws {
            try await database.client.withConnection { _ in
                held.flag.store(true, ordering: .relaxed)
                await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
            }
        }
    }

    static func environment(_ url: String) -> [String: String] {
        [
            "DATABASE_URL": url,
            "CHRONIR_OPS_PORT": "0",
            "CHRONIR_LOG_LEVEL": ProcessInfo.processInfo.environment["CHRONIR_TEST_LOG_LEVEL"] ?? "critical",
            "CHRONIR_BUS_KEYS": TestBusKeys.directory,
            "CHRONIR_INSTANCE_ID": "shutdown-test",
        ]
    }

    @Test("a service whose part holds a database lease for ever still stops")
    func leaseHeldForEver() async throws {
        let url = try await TestDatabase.create("stuckpool")
        let held = Held()
        let service = try RunningService(name: "alarms", environment: Self.environment(url), migrations: []) { _, database, parts in
            var parts = parts
            parts.services.append(LeaseHolder(database: database, held: held))
            return parts
        }
        #expect(await eventually(timeout: .seconds(20)) { held.holding }, "the part never leased its connection")
        let started = ContinuousClock.now
        // 4 s of the part's patience, up to 5 s for the pool, well inside the 40 s: a stop that
        // waited for the lease would record "did not stop within 40 s", naming its phase.
        await service.stop(within: .seconds(40))
        #expect(service.runtime.phase == "shut down", "stopped at: \(service.runtime.phase)")
        #expect(started.duration(to: .now) < .seconds(30), "stopped after \(started.duration(to: .now))")
    }

    @Test("a test service whose stop does not end fails its test, naming the phase it is stuck in")
    func hungStopIsNamed() async throws {
        let url = try await TestDatabase.create("hungstop")
        let service = try RunningService(name: "alarms", environment: Self.environment(url), migrations: []) { runtime, _, parts in
            _ = runtime.owning((), "a resource whose close never ends") { _ in
                await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
            }
            return parts
        }
        #expect(await eventually(timeout: .seconds(20)) { service.runtime.phase == "running" }, "at: \(service.runtime.phase)")
        await withKnownIssue {
            await service.stop(within: .seconds(3))
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("did not stop within 3") && $0.rawValue.contains("closing a resource whose close never ends") }
        }
    }
}
