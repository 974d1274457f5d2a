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
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(100)) { try await Task.sleep(for: .seconds(30)) }
        }
        await #expect(throws: Refused.self) {
            try await withDeadline(.seconds(5)) { () async throws -> Int in throw Refused() }
        }
    }
}
