import Contracts
import Foundation
import InvitationsCore
import Logging
import Persistence

/// Marks pending invitations past their expiry as `expired` (and publishes it), periodically.
struct ExpirySweeper: Sendable {
    let store: InvitationStore
    let logger: Logger

    /// Expires what is due now; returns how many.
    func sweep() async throws -> Int {
        let n: Int = try await store.outbox.transaction { c in
            let (now, due) = try await store.lockDue(on: c)
            var expired = 0
            for i in due {
                guard let transition = InvitationMachine.expire(i, now: now) else { continue }
                _ = try await store.finish(i, transition, userName: nil, on: c)
                expired += 1
            }
            return expired
        }
        if n > 0 {
            logger.info("expired \(n) invitation(s)")
        }
        return n
    }
}
