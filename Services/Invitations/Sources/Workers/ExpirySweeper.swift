import Contracts
import Foundation
import Logging
import Persistence

/// Marks pending invitations past their expiry as `expired` (and publishes it), periodically.
struct ExpirySweeper: Sendable {
    let store: InvitationStore
    let logger: Logger

    /// Expires what is due now; returns how many.
    func sweep() async throws -> Int {
        let n: Int = try await store.outbox.transaction { c in
            let due = try await store.lockDue(on: c)
            for i in due {
                _ = try await store.finish(i, status: "expired", event: InvitationsEvents.expired, user: nil, userName: nil, reason: nil, on: c)
            }
            return due.count
        }
        if n > 0 {
            logger.info("expired \(n) invitation(s)")
        }
        return n
    }
}
