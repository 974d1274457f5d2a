import Foundation

/// Exponential back-off with jitter for pushes (`chronir-api.md` §12.3: base 1 s, at most
/// 60 s, 5 tries).
public struct RetryPolicy: Sendable {
    public var base: Duration = .seconds(1)
    public var max: Duration = .seconds(60)
    public var tries: Int = 5

    public init(base: Duration = .seconds(1), max: Duration = .seconds(60), tries: Int = 5) {
        self.base = base
        self.max = max
        self.tries = tries
    }

    /// The wait after failed attempt `attempt` (1-based): base·2^(attempt−1), capped, then
    /// scaled by a random factor in [0.5, 1] so a crowd of retries spreads out; a provider's
    /// `Retry-After` is honoured when it asks for longer.
    public func delay(after attempt: Int, retryAfter: TimeInterval? = nil, jitter: Double = Double.random(in: 0.5...1)) -> TimeInterval {
        let base = Double(self.base.components.seconds) + Double(self.base.components.attoseconds) / 1e18
        let cap = Double(self.max.components.seconds) + Double(self.max.components.attoseconds) / 1e18
        let exponential = min(cap, base * pow(2, Double(Swift.max(0, attempt - 1))))
        return Swift.max(exponential * jitter, Swift.min(cap, retryAfter ?? 0))
    }
}
