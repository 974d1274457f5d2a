import Foundation
@testable import GatewayService
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization
import Testing

/// Issue 74: a streamed answer whose client stopped reading is closed once its writes have not
/// moved for the write timeout (``WriteProgress``). A write waits while the client's TCP window
/// is shut; here a writer that never completes stands in for that client.
@Suite("Stalled writes: a streamed answer that stops moving is closed")
struct StalledWriteTests {
    /// A writer whose writes take `delay` each (a client that reads that slowly, or not at all).
    struct SlowWriter: ResponseBodyWriter {
        let delay: Duration
        mutating func write(_ buffer: ByteBuffer) async throws {
            try await Task.sleep(for: delay)
        }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    final class Closed: Sendable {
        let at = Mutex<ContinuousClock.Instant?>(nil)
        func close() { at.withLock { $0 = $0 ?? .now } }
        var closed: Bool { at.withLock { $0 != nil } }
    }

    @Test("writes that keep completing (a ping every 100 ms) are never cut; once a write hangs, the connection is closed within the timeout and a quarter")
    func cutWhenStalled() async throws {
        let progress = WriteProgress()
        let closed = Closed()
        let watch = progress.watch(limit: .milliseconds(400)) { closed.close() }
        defer { watch.cancel() }
        var writer: any ResponseBodyWriter = WatchedWriter(inner: SlowWriter(delay: .milliseconds(100)), progress: progress)
        for _ in 0..<12 { try await writer.write(ByteBuffer(string: ": ping\n\n")) }   // 1.2 s of healthy pings
        #expect(!closed.closed, "a stream that kept writing was cut")

        // The client stops reading: the next write does not complete.
        let stalledAt = ContinuousClock.now
        let pending = Task {
            var w: any ResponseBodyWriter = WatchedWriter(inner: SlowWriter(delay: .seconds(3600)), progress: progress)
            try? await w.write(ByteBuffer(string: "id: 1\n\n"))
        }
        defer { pending.cancel() }
        let cut = await waitUntil(.seconds(3)) { closed.closed }
        #expect(cut, "a hung write was never cut")
        let after = (closed.at.withLock { $0 } ?? .now) - stalledAt
        #expect(after < .milliseconds(400 + 100 + 300), "cut after \(after)")
    }

    @Test("the writer passes every byte through and counts progress only for completed writes")
    func passesThrough() async throws {
        let progress = WriteProgress()
        let inner = SlowWriter(delay: .zero)
        var writer = WatchedWriter(inner: inner, progress: progress)
        try await Task.sleep(for: .milliseconds(50))
        #expect(progress.stalledFor >= 40)
        try await writer.write(ByteBuffer(string: "hello"))
        #expect(progress.stalledFor < 40)
    }

    func waitUntil(_ limit: Duration, _ condition: () -> Bool) async -> Bool {
        let end = ContinuousClock.now + limit
        while ContinuousClock.now < end {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }
}
