import Foundation
import Persistence
import Testing

/// `withDeadline`: the answer of an operation that ends in time, `DeadlineExceeded` for one that
/// does not, and the operation's own error.
@Suite("Deadlines")
struct DeadlineTests {
    struct Refused: Error {}

    @Test("an operation that ends in time answers; one that hangs gives DeadlineExceeded; an error passes through")
    func deadline() async throws {
        #expect(try await withDeadline(.seconds(5)) { 42 } == 42)
        // Many quick calls in a row (as a relay makes): each answers with its own value.
        for k in 0..<200 { #expect(try await withDeadline(.seconds(30)) { k } == k) }
        let started = ContinuousClock.now
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(100)) { try await Task.sleep(for: .seconds(30)) }
        }
        // At the deadline, not when the operation would have ended (generous for a loaded machine).
        let waited = started.duration(to: .now)
        #expect(waited >= .milliseconds(100) && waited < .seconds(5), "withDeadline(100 ms) returned after \(waited)")
        // An operation that ignores cancellation still gives way at the deadline.
        let stubborn = ContinuousClock.now
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(100)) { () async throws -> Int in
                while stubborn.duration(to: .now) < .seconds(3) { try? await Task.sleep(for: .milliseconds(20)) }
                return 1
            }
        }
        #expect(stubborn.duration(to: .now) < .seconds(2), "withDeadline waited for an operation that ignores cancellation")
        await #expect(throws: Refused.self) {
            try await withDeadline(.seconds(5)) { () async throws -> Int in throw Refused() }
        }
    }
}
