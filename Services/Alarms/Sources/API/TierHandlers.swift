import Contracts
import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO

/// The user-tier read model and what a downgrade does to alarms (§9.4: deactivate alarms
/// beyond the limit, never delete them). Fed by billing's entitlement events (and an internal request for operators).
struct TierHandlers: Sendable {
    let store: AlarmStore
    let changes: AlarmChanges
    let outbox: OutboxWriter

    func register(into router: inout RPCRouter) {
        router.on(AlarmsMethods.SetTier.self) { req, _ in
            guard let tier = Tier(rawValue: req.tier) else { throw ServiceError(.validationFailed, "tier must be free, plus or premium") }
            let deactivated = try await outbox.transaction { c in try await apply(tier, to: req.userId, actor: nil, on: c) }
            return .init(tier: tier.rawValue, deactivated: deactivated)
        }
    }

    /// `billing.entitlement-changed`: the tier billing resolved.
    var billing: EventHandlers {
        var h = EventHandlers(BillingEvents.self)
        h.on(BillingEvents.entitlementChanged) { e, _, c in
            _ = try await apply(e.tier, to: e.userId, actor: nil, on: c)
        }
        return h
    }

    /// Records `tier` for `user` and enforces its alarm limit; returns the deactivated alarms.
    func apply(_ tier: Tier, to user: String, actor: String?, on c: PostgresConnection) async throws -> [String] {
        try await store.lockOwner(user, on: c)
        try await store.setTier(tier, of: user, on: c)
        guard let limit = tier.activeAlarmLimit else { return [] }
        // Keep the `limit` alarms due soonest; deactivate the rest.
        let ids = try await store.activeAlarmIDs(ownedBy: user, beyond: limit, on: c)
        var deactivated: [String] = []
        for id in ids {
            guard let a = try await store.lock(id, on: c) else { continue }
            var n = a
            n.isActive = false
            n.version = a.version + 1
            n.updatedAt = Date()
            try await store.update(n, on: c)
            try await changes.record(before: a, after: n, actor: actor, on: c)
            deactivated.append(id)
        }
        return deactivated
    }
}
