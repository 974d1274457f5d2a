import Synchronization

/// A count of expensive work in progress with a bound (password hashes, photo bodies): work
/// that would go past it is refused at once with 503 `CA022` and `retryAfterSeconds`, never
/// queued, so a flood costs the flooder a refusal and everyone else nothing.
public final class BoundedSlots: Sendable {
    /// The most pieces of work in progress at once.
    public let limit: Int
    /// The refusal's message ("password checks are busy; try again in a moment").
    public let refusal: String
    /// The `Retry-After` the refusal suggests.
    public let retryAfterSeconds: Int
    private let held = Atomic<Int>(0)

    public init(limit: Int, refusal: String, retryAfterSeconds: Int = 1) {
        self.limit = limit
        self.refusal = refusal
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// The work in progress now.
    public var depth: Int { held.load(ordering: .relaxed) }

    /// Takes a slot, or throws `CA022` when all `limit` are taken. Pair with ``leave()``.
    public func enter() throws {
        guard held.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue < limit else {
            held.wrappingSubtract(1, ordering: .acquiringAndReleasing)
            throw ServiceError(.serviceUnavailable, refusal, details: .object(["retryAfterSeconds": .number(Double(retryAfterSeconds))]))
        }
    }

    /// Gives a slot back.
    public func leave() { held.wrappingSubtract(1, ordering: .acquiringAndReleasing) }

    /// Runs `work` in a slot (``enter()`` first, so a refusal runs nothing).
    public func run<T: Sendable>(_ work: () async throws -> T) async throws -> T {
        try enter()
        defer { leave() }
        return try await work()
    }
}
