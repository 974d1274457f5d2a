@testable import AccountsService
import Foundation
import Messaging
import NIOPosix
import Synchronization
import Testing

/// Issue 75: a burst of sign-ups behind the hashing threads made callers time out while their
/// hashes still ran one after another, each answer thrown away; accounts now skips a hash whose
/// caller has stopped waiting.
@Suite("password hashes and the caller's deadline")
struct HashDeadlineTests {
    final class Count: Sendable {
        let value = Atomic<Int>(0)
        func add() { value.add(1, ordering: .relaxed) }
        var now: Int { value.load(ordering: .relaxed) }
    }

    @Test("a hash still queued when its caller's deadline passes is not computed; one within its deadline, or with none, is")
    func queuedPastDeadline() async throws {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let queue = HashQueue(limit: 8)
        let ran = Count()
        let started = Count()
        // A slow hash holds the only thread…
        let slow = Task { try await queue.run(pool) { started.add(); Thread.sleep(forTimeInterval: 0.5); ran.add() } }
        while started.now == 0 { try await Task.sleep(for: .milliseconds(5)) }
        // …and one queued behind it has 100 ms left: its caller is gone when the thread frees.
        var refused: ServiceError?
        do {
            try await RequestDeadline.$current.withValue(ContinuousClock.now + .milliseconds(100)) {
                try await queue.run(pool) { ran.add() }
            }
        } catch let e as ServiceError {
            refused = e
        }
        try await slow.value
        #expect(refused?.code == .deadlineExceeded)
        #expect(ran.now == 1)
        try await RequestDeadline.$current.withValue(ContinuousClock.now + .seconds(30)) {
            try await queue.run(pool) { ran.add() }
        }
        try await queue.run(pool) { ran.add() }
        #expect(ran.now == 3)
        try await pool.shutdownGracefully()
    }
}
