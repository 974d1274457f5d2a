import BillingCore
import Contracts
import Foundation
import Logging
import Persistence

/// Moves subscriptions on when their time passes with no store notification: an auto-renewing
/// subscription past its expiry enters its grace period (16 days iOS, 7 days Android), a
/// grace period that ended or a cancelled one that expired becomes `expired`; the users'
/// entitlements are resolved again (and published when they change).
struct EntitlementSweeper: Sendable {
    let store: SubscriptionStore
    let appleGrace: TimeInterval
    let googleGrace: TimeInterval
    let logger: Logger

    func sweep(now: Date = Date()) async throws -> Int {
        let n: Int = try await store.outbox.transaction { c in
            let due = try await store.dueForExpiry(now: now, on: c)
            var users = Set<String>()
            for s in due {
                switch SubscriptionRules.expiryStep(s, appleGrace: appleGrace, googleGrace: googleGrace) {
                case .enterGrace(let until): try await store.enterGrace(s.id, until: until, on: c)
                case .expire: try await store.expire(s.id, on: c)
                }
                users.insert(s.uid)
            }
            for u in users.sorted() { try await store.resolve(u, reason: "expired", now: now, on: c) }
            return due.count
        }
        if n > 0 {
            logger.info("subscriptions moved on: \(n)")
        }
        return n
    }
}
