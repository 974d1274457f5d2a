import Foundation
import Persistence
import Support
import Testing

/// A consumer behind on large events (issue 58: "replies are capped by count, not bytes"): 500
/// events of 60 KB are 30 MB, and the consumer's client drops any reply over its 1 MiB frame
/// limit, so it asked again for ever with lag 0. The replay now stops at the asker's limit.
@Suite("Replays bounded by bytes", .serialized)
struct LargeReplayTests {
    let d = DurabilityTests()

    @Test("a consumer that missed 80 events of 60 KB catches up by replay within its 1 MiB frames, each event once")
    func largeEventsReplayed() async throws {
        let url = try await TestDatabase.create("large")
        let ports = DurabilityTests.Ports()
        // The events are written before any consumer runs: it can only replay them.
        let producer = try TestProcess("chronir-testpeer", ["produce", "--count", "80", "--pad", "60000"],
                                       environment: ports.producerEnv.merging(["DATABASE_URL": url]) { $1 }, label: "producer")
        #expect(await producer.waitForOutput("appended 80 events", timeout: .seconds(60)), "\(producer.output.suffix(1000))")
        var env = ports.consumerEnv
        env["DATABASE_URL"] = url
        let consumer = try TestProcess("chronir-testpeer", ["consume"], environment: env, label: "consumer")
        #expect(await d.caughtUp(url, head: 80), "consumer log: \(consumer.output.suffix(2000))")
        let rows = try await d.applied(url).map { Int($0.0) }
        #expect(rows.sorted() == Array(1...80))
        #expect(!consumer.output.contains("dropped an oversized reply"), "\(consumer.output.suffix(2000))")
        await consumer.terminate()
        await producer.terminate()
    }
}
