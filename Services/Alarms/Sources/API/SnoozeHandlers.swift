import Contracts
import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO

/// Snoozing a firing occurrence (US-1.4): a one-off re-fire later; `nextFireDate` stays.
struct SnoozeHandlers: Sendable {
    let store: AlarmStore
    let outbox: OutboxWriter
    /// Asked whether the alarm has an accountability policy (paid snoozes, billing).
    let billing: RPCClient
    /// How early before its instant an occurrence may be snoozed (clock skew of devices).
    let earlySlack: TimeInterval = 5

    /// Snooze lengths by tier, in minutes (§7: Free 10 min and 1 h; Plus adds 1 day and 1 week).
    static let freeMinutes: Set<Int> = [10, 60]
    static let plusMinutes: Set<Int> = [10, 60, 1440, 10080]
    /// Consecutive snoozes allowed per occurrence.
    static let maxConsecutive = 3

    func register(into router: inout RPCRouter) {
        router.on(AlarmsMethods.Snooze.self) { req, ctx in try await snooze(req, actor: try ctx.requireActor()) }
        router.on(AlarmsMethods.SnoozeOptions.self) { req, ctx in try await options(req, actor: try ctx.requireActor()) }
    }

    /// Billing's answer for an accountability policy; nil when billing cannot be reached (the
    /// usual free snoozes apply then: an alarm app must not stop snoozing because billing is down).
    func allowance(alarm: String, occurrence: Date, user: String, number: Int) async -> BillingMethods.SnoozeAllowance.Response? {
        do {
            return try await billing.call(BillingMethods.SnoozeAllowance.self,
                                          .init(alarmId: alarm, occurrenceAt: occurrence, userId: user, snoozeNumber: number), timeout: .seconds(1))
        } catch {
            store.logger.warning("snooze policy unknown (billing unreachable); the usual limit applies", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// The next snooze of the alarm's pending occurrence as ``snooze(_:actor:)`` would judge it,
    /// without taking it: the lengths of the caller's tier, the count so far, the limit and, under
    /// an accountability policy, the price of the next one when it is paid.
    func options(_ req: AlarmsMethods.SnoozeOptions.Request, actor: String) async throws -> AlarmsMethods.SnoozeOptions.Response {
        let (alarm, tier, count): (Alarm, Tier, Int) = try await store.database.transaction { c in
            guard let a = try await store.load(req.alarmId, on: c), a.isVisible(to: actor), a.deletedAt == nil else {
                throw AlarmHandlers.notFound(req.alarmId)
            }
            let tier = try await store.tier(of: actor, on: c)
            guard let occurrence = a.nextFireDate else { return (a, tier, 0) }
            let count = try await store.snoozeCount(alarmId: a.id, occurrence: occurrence, on: c)
            return (a, tier, count)
        }
        let minutes = (tier < .plus ? Self.freeMinutes : Self.plusMinutes).sorted()
        guard alarm.isActive, !alarm.isPaused, let occurrence = alarm.nextFireDate else {
            return .init(occurrenceAt: nil, snoozeCount: 0, maxSnoozes: Self.maxConsecutive, minutes: minutes, available: false, costCents: nil, productId: nil)
        }
        let allowance = await allowance(alarm: alarm.id, occurrence: occurrence, user: actor, number: count + 1)
        let limit = allowance?.maxSnoozes ?? Self.maxConsecutive
        // As `snooze` judges: the occurrence is due, a snooze is left, and a refusal names its price.
        let due = occurrence.timeIntervalSinceNow <= earlySlack
        let available = due && count < limit
        var cost: Int?, product: String?
        if available, let a = allowance, !a.allowed, let c = a.costCents, let p = a.productId { (cost, product) = (c, p) }
        return .init(occurrenceAt: occurrence, snoozeCount: count, maxSnoozes: limit, minutes: minutes, available: available,
                     costCents: cost, productId: product)
    }

    func snooze(_ req: AlarmsMethods.Snooze.Request, actor: String) async throws -> AlarmsMethods.Snooze.Response {
        guard Self.plusMinutes.contains(req.minutes) else {
            throw ServiceError(.validationFailed, "minutes must be one of 10, 60, 1440 or 10080")
        }
        let response: AlarmsMethods.Snooze.Response = try await outbox.transaction { c in
            guard let a = try await store.lock(req.alarmId, on: c), a.isVisible(to: actor), a.deletedAt == nil else {
                throw AlarmHandlers.notFound(req.alarmId)
            }
            let tier = try await store.tier(of: actor, on: c)
            if tier < .plus, !Self.freeMinutes.contains(req.minutes) {
                throw ServiceError(.tierRequired, "snoozing for \(req.minutes == 1440 ? "1 day" : "1 week") needs Plus")
            }
            let now = Date()
            guard a.isActive, !a.isPaused, let occurrence = a.nextFireDate else {
                throw ServiceError(.validationFailed, "alarm \(a.id) has no pending occurrence to snooze")
            }
            guard occurrence.timeIntervalSince(now) <= earlySlack else {
                throw ServiceError(.validationFailed, "alarm \(a.id) has not fired yet; its next occurrence is \(ISOTime.format(occurrence))")
            }
            let count = try await store.lockSnoozeCount(alarmId: a.id, occurrence: occurrence, on: c)
            let allowance = await self.allowance(alarm: a.id, occurrence: occurrence, user: actor, number: count + 1)
            let limit = allowance?.maxSnoozes ?? Self.maxConsecutive
            guard count < limit else {
                throw ServiceError(.snoozeLimitReached, "this occurrence was already snoozed \(limit) times; complete or skip it")
            }
            if let allowance, !allowance.allowed, let cost = allowance.costCents, let product = allowance.productId {
                throw ServiceError(.paymentRequired,
                                   String(format: "snooze %d of this alarm costs $%.2f: buy %@, record it with POST /v1/me/snooze-ledger, then snooze",
                                          count + 1, Double(cost) / 100, product),
                                   details: .object(["costCents": .number(Double(cost)), "productId": .string(product),
                                                     "occurrenceAt": .string(ISOTime.format(occurrence))]))
            }
            let refire = now.addingTimeInterval(Double(req.minutes) * 60)
            try await store.recordSnooze(alarmId: a.id, occurrence: occurrence, refireAt: refire, at: now, by: actor, on: c)
            let ownerTier = try await store.tier(of: a.ownerId, on: c)
            // The other members' screens and devices show the snooze (`alarm_changed`).
            let window = a.groupId == nil ? nil : try await store.groupSettings(group: a.groupId!, on: c).pendingWindowMinutes
            var state = AlarmChanges.state(a, ownerTier: ownerTier, missedWindowMinutes: window)
            let sync = AlarmSharing.syncMembers(before: nil, after: a, actor: actor)
            state.syncMembers = sync.isEmpty ? nil : sync
            try await outbox.append(AlarmsEvents.alarmSnoozed, AlarmsEvents.Snoozed(
                alarm: state, occurrenceAt: occurrence, refireAt: refire,
                snoozeCount: count + 1, userId: actor), actor: actor, on: c)
            return AlarmsMethods.Snooze.Response(alarm: a, occurrenceAt: occurrence, refireAt: refire, snoozeCount: count + 1)
        }
        return response
    }
}
