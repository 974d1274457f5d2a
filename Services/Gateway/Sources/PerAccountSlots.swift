import GatewayCore
import Messaging
import Synchronization

/// At most `limit` pieces of work in progress at once per account (photo bodies being read):
/// one account cannot hold every slot of a process-wide bound (issue 74). A refusal is 429
/// `CA019` with a `Retry-After`.
final class PerAccountSlots: Sendable {
    let limit: Int
    let refusal: String
    private let held: Mutex<SlotCounts>

    init(limit: Int, refusal: String) {
        self.limit = max(1, limit)
        self.refusal = refusal
        self.held = Mutex(SlotCounts(cap: limit))
    }

    /// Takes one of `account`'s slots, or throws. Pair with ``leave(_:)``.
    func enter(_ account: String) throws {
        guard held.withLock({ $0.take(account) }) else {
            throw ServiceError.rateLimited(refusal, retryAfter: 2)
        }
    }

    func leave(_ account: String) {
        held.withLock { $0.give(account) }
    }

    /// The slots `account` holds now (tests).
    func held(by account: String) -> Int { held.withLock { $0.count(account) } }
}
