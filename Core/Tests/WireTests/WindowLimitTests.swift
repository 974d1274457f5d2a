import Foundation
import Testing
import Wire

/// The per-window limit's rule (``WindowLimit``): under the limit nothing waits; at it, the
/// wait is until the oldest action leaves the window, in whole seconds, never 0.
@Suite("Window limit")
struct WindowLimitTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("retry after, by count and age of the oldest action", arguments: [
        // (limit, window, count, oldest seconds ago, expected)
        (3, 60.0, 0, nil as Double?, nil as Int?),
        (3, 60.0, 2, 59.0, nil),
        (3, 60.0, 3, 0.0, 60),
        (3, 60.0, 3, 10.0, 50),
        (3, 60.0, 3, 59.5, 1),
        (3, 60.0, 4, 59.99, 1),
        (3, 60.0, 3, 60.0, 1),
        (3, 60.0, 3, nil, 60),
        (20, 3600.0, 20, 0.25, 3600),
        (20, 3600.0, 25, 1800.0, 1800),
        (1, 60.0, 1, 12.3, 48),
    ])
    func retryAfter(limit: Int, window: Double, count: Int, ago: Double?, expected: Int?) {
        let rule = WindowLimit(limit, per: window)
        let oldest = ago.map { Self.now.addingTimeInterval(-$0) }
        #expect(rule.retryAfter(count: count, oldest: oldest, now: Self.now) == expected)
    }
}
