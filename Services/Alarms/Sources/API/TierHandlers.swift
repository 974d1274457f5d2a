import AlarmsCore
import Contracts
import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO

/// The user-tier read model and what a tier change does to alarms (§9.4: a downgrade suspends
/// sharing and deactivates alarms beyond the limit, never deleting; an upgrade gives them
/// back). Fed by billing's entitlement events (and an internal request for operators).
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
            let old = try await store.tierStanding(of: e.userId, on: c)
            _ = try await apply(e.tier, to: e.userId, actor: nil, on: c)
            let new = TierStanding.after(old, new: e.tier, previous: e.previousTier, reason: e.reason, at: Date())
            try await store.setLapse(new, of: e.userId, on: c)
        }
        return h
    }

    /// Records `tier` for `user` and applies what it allows (§9.4), at the moment billing says
    /// the downgrade executes (its grace period over: 16 days on iOS, 7 on Android): below
    /// Premium the owner's sharing is suspended (members lose access and are told; it is kept),
    /// Free switches off alarms beyond 2 (kept); going up again gives back what it may. Returns
    /// the alarms switched off.
    func apply(_ tier: Tier, to user: String, actor: String?, on c: PostgresConnection) async throws -> [String] {
        try await store.lockOwner(user, on: c)
        try await store.setTier(tier, of: user, on: c)
        if tier < .premium {
            try await suspendSharing(of: user, actor: actor, on: c)
        } else {
            try await restoreSharing(of: user, actor: actor, on: c)
        }
        guard let limit = tier.activeAlarmLimit else {
            try await reactivate(user, actor: actor, on: c)
            return []
        }
        // Keep the `limit` alarms due soonest; deactivate the rest.
        var deactivated: [String] = []
        for id in try await store.activeAlarmIDs(ownedBy: user, beyond: limit, on: c) {
            try await changes.revise(id, actor: actor, on: c) { $0.isActive = false }
            try await store.recordTierDeactivation(id, owner: user, on: c)
            deactivated.append(id)
        }
        return deactivated
    }

    /// Premium → Free or Plus: every alarm of the owner stops being shared; what it shared is
    /// kept. So do the alarms others below Premium keep in the groups the owner owns: the
    /// owner's plan was what let them share (finding 7 of `docs/routes-by-principal.md`).
    func suspendSharing(of owner: String, actor: String?, on c: PostgresConnection) async throws {
        for id in try await store.sharingAlarmIDs(ownedBy: owner, on: c) {
            // An alarm in a group a Premium owner holds stays: that plan covers it.
            try await suspend(id, unlessCovered: true, actor: actor, on: c)
        }
        for id in try await store.coveredAlarmIDs(inGroupsOwnedBy: owner, on: c) {
            try await suspend(id, unlessCovered: false, actor: actor, on: c)
        }
    }

    private func suspend(_ id: String, unlessCovered: Bool, actor: String?, on c: PostgresConnection) async throws {
        var kept: AlarmSharing.Suspended?
        var owner = ""
        try await changes.revise(id, actor: actor, reason: .ownerDowngraded, on: c) { alarm in
            if unlessCovered, let g = alarm.groupId, try await store.groupOwnerIsPremium(g, on: c) { return }
            guard let (n, k) = AlarmSharing.suspending(alarm) else { return }
            alarm = n
            kept = k
            owner = n.ownerId
        }
        if let kept { try await store.suspend(id, owner: owner, kept, on: c) }
    }

    /// Premium again: the suspended sharing comes back, to members who are still there: the
    /// owner's own alarms, and the alarms of others in the groups the owner owns.
    func restoreSharing(of owner: String, actor: String?, on c: PostgresConnection) async throws {
        let own = try await store.takeSuspended(ownedBy: owner, on: c)
        let covered = try await store.takeSuspended(inGroupsOwnedBy: owner, on: c)
        for (id, kept) in own + covered {
            try await restore(id, kept, actor: actor, on: c)
        }
    }

    private func restore(_ id: String, _ kept: AlarmSharing.Suspended, actor: String?, on c: PostgresConnection) async throws {
        try await changes.revise(id, actor: actor, reason: .ownerUpgraded, on: c) { alarm in
            guard alarm.deletedAt == nil else { return }
            // The group comes back with its members now while the alarm's owner is still in it
            // (one who left took the alarm out of it: `dropFromSuspended`).
            var groupMembers: [String]?
            if let g = kept.groupId, try await store.groupRole(group: g, user: alarm.ownerId, on: c) != nil {
                groupMembers = try await store.groupMembers(group: g, on: c)
            }
            alarm = AlarmSharing.restoring(kept, to: alarm, groupMembers: groupMembers)
        }
    }

    /// Plus or Premium again: the alarms the Free limit switched off come back on (those the
    /// owner did not delete or switch on meanwhile).
    func reactivate(_ owner: String, actor: String?, on c: PostgresConnection) async throws {
        let now = Date()
        for id in try await store.takeTierDeactivations(ownedBy: owner, on: c) {
            try await changes.revise(id, actor: actor, at: now, on: c) { alarm in
                guard alarm.deletedAt == nil, !alarm.isActive else { return }
                alarm = try AlarmRules.reactivated(alarm, now: now)
            }
        }
    }
}
