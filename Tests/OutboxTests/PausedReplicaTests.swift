import Foundation
import Persistence
import Support
import Testing

/// A consumer replica frozen inside its transaction (issue 58: "a paused consumer replica blocks
/// its group"): SIGSTOPped while it holds the checkpoint's row lock. PostgreSQL ends its idle
/// session after `CHRONIR_CONSUMER_IDLE_TIMEOUT`, the lock goes, and the other replica applies
/// the stream; when the frozen one wakes, its transaction is gone and nothing is applied twice.
@Suite("Paused consumer replicas", .serialized)
struct PausedReplicaTests {
    let d = DurabilityTests()

    @Test("a replica SIGSTOPped holding the checkpoint lock holds up the other for the idle timeout, not for ever; every event once")
    func pausedReplicaReleasesTheLock() async throws {
        let url = try await TestDatabase.create("paused")
        let ports = DurabilityTests.Ports()
        var env = ports.consumerEnv
        env["DATABASE_URL"] = url
        env["CHRONIR_CONSUMER_IDLE_TIMEOUT"] = "3s"
        var armed = env
        armed["CHRONIR_FAILPOINT_STOP_BEFORE_CHECKPOINT"] = "producer:1"
        let frozen = try TestProcess("chronir-testpeer", ["consume"], environment: armed, label: "frozen")
        #expect(await frozen.waitForOutput("consumer ready"))
        let producer = try TestProcess("chronir-testpeer", ["produce", "--count", "300"], environment: ports.producerEnv.merging(["DATABASE_URL": url]) { $1 },
                                       label: "producer")
        #expect(await frozen.waitForOutput("failpoint: SIGSTOP", timeout: .seconds(60)), "\(frozen.output.suffix(2000))")
        let other = try TestProcess("chronir-testpeer", ["consume"], environment: env, label: "other")
        let started = ContinuousClock.now
        #expect(await d.caughtUp(url, head: 300), "the other replica waited on the frozen one's lock: \(other.output.suffix(2000))")
        let waited = started.duration(to: .now)
        #expect(waited < .seconds(30), "\(waited)")
        frozen.signal(SIGCONT)
        try await Task.sleep(for: .seconds(2))
        let rows = try await d.applied(url).map { Int($0.0) }
        #expect(rows.count == Set(rows).count, "applied twice: \(rows.count - Set(rows).count)")
        #expect(Set(rows) == Set(1...300))
        print("paused replica: the other replica caught up 300 events \(waited) after the freeze (idle timeout 3 s)")
        await frozen.terminate()
        await other.terminate()
        await producer.terminate()
    }
}
