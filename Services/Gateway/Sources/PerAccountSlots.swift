import Messaging
import Synchronization

/// At most `limit` pieces of work in progress at once per account (photo bodies being read):
/// one account cannot hold every slot of a process-wide bound (issue 74). A refusal is 429
/// `CA019` with a `Retry-After`.
final class PerAccountSlots: Sendable {
    let limit: Int
    let refusal: String
    private let held = Mutex<[String: Int]>([:])

    init(limit: Int, refusal: String) {
        self.limit = max(1, limit)
        self.refusal = refusal
    }

    /// Takes one of `account`'s slots, or throws. Pair with ``leave(_:)``.
    func enter(_ account: String) throws {
        let taken = held.withLock { h -> Bool in
            guard h[account, default: 0] < limit else { return false }
            h[account, default: 0] += 1
            return true
        }
        guard taken else {
            throw ServiceError.rateLimited(refusal, retryAfter: 2)
        }
    }

    func leave(_ account: String) {
        held.withLock { h in
            guard let n = h[account] else { return }
            h[account] = n > 1 ? n - 1 : nil
        }
    }

    /// The slots `account` holds now (tests).
    func held(by account: String) -> Int { held.withLock { $0[account, default: 0] } }
}
