import AlarmsCore
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

    /// Snoozes allowed per occurrence: the accountability policy's when the alarm has one, else
    /// the alarm's own `maxSnoozeCount`.
    static func limit(_ alarm: Alarm, _ allowance: BillingMethods.SnoozeAllowance.Response?) -> Int {
        if let allowance, allowance.policy { return allowance.maxSnoozes }
        return alarm.maxSnoozeCount
    }

    /// The next snooze of the alarm's pending occurrence as ``snooze(_:actor:)`` would judge it,
    /// without taking it: the lengths of the caller's tier, the default one, the count so far,
    /// the limit and, under an accountability policy, the price of the next one when it is paid.
    func options(_ req: AlarmsMethods.SnoozeOptions.Request, actor: String) async throws -> AlarmsMethods.SnoozeOptions.Response {
        let (alarm, tier, count): (Alarm, Tier, Int) = try await store.database.transaction { c in
            guard let a = try await store.load(req.alarmId, on: c), a.isVisible(to: actor), a.deletedAt == nil else {
                throw AlarmHandlers.notFound(req.alarmId)
            }
            // Counted as `snooze` counts them (the table, which also holds snoozes from before 0.3).
            let count = try await a.nextFireDate.asyncMap { try await store.snoozeCount(alarmId: a.id, occurrence: $0, on: c) } ?? 0
            return (a, try await store.tier(of: actor, on: c), count)
        }
        let minutes = tier < .plus ? SnoozeRules.freeMinutes : SnoozeRules.plusMinutes
        var answer = AlarmsMethods.SnoozeOptions.Response(occurrenceAt: nil, snoozeCount: 0, maxSnoozes: alarm.maxSnoozeCount, minutes: minutes,
                                                          available: false, costCents: nil, productId: nil)
        answer.defaultMinutes = SnoozeRules.defaultLength(alarm.snoozeDurationMinutes, tier: tier)
        answer.customAllowed = tier >= .plus
        guard alarm.isActive, !alarm.isPaused, let occurrence = alarm.nextFireDate else { return answer }
        let allowance = await allowance(alarm: alarm.id, occurrence: occurrence, user: actor, number: count + 1)
        let limit = Self.limit(alarm, allowance)
        // As `snooze` judges: the occurrence is due, a snooze is left, and a refusal names its price.
        let due = occurrence.timeIntervalSinceNow <= earlySlack
        answer.occurrenceAt = occurrence
        answer.snoozeCount = count
        answer.maxSnoozes = limit
        answer.available = due && count < limit
        if answer.available, let a = allowance, !a.allowed, let c = a.costCents, let p = a.productId {
            (answer.costCents, answer.productId) = (c, p)
        }
        return answer
    }

    /// Snoozes the pending occurrence: the length from the request, the alarm or the tier
    /// (``SnoozeRules``), at most the alarm's `maxSnoozeCount` times (or the accountability
    /// policy's); the alarm shows `snoozedUntil` and `snoozeCount` to every member and device
    /// (a new version, the delta feed, a silent push), and the scheduler re-fires it then.
    func snooze(_ req: AlarmsMethods.Snooze.Request, actor: String) async throws -> AlarmsMethods.Snooze.Response {
        // Billing is asked before the transaction, for the snooze the alarm's pending occurrence
        // would take (no call to another service under the alarm's lock); the transaction
        // checks that it is still that one, else billing is asked again (at most three times).
        var asked = try await pendingSnooze(req.alarmId, actor: actor).asyncMap { pending in
            AskedAllowance(occurrence: pending.occurrence, number: pending.number,
                           allowance: await allowance(alarm: req.alarmId, occurrence: pending.occurrence, user: actor, number: pending.number))
        }
        for attempt in 1...3 {
            switch try await snooze(req, actor: actor, asked: asked, lastTry: attempt == 3) {
            case .done(let response):
                return response
            case .ask(let occurrence, let number):
                asked = AskedAllowance(occurrence: occurrence, number: number,
                                       allowance: await allowance(alarm: req.alarmId, occurrence: occurrence, user: actor, number: number))
            }
        }
        throw ServiceError(.internalError, "the snooze of alarm \(req.alarmId) ended without an answer")
    }

    /// Billing's answer for snooze `number` of `occurrence`.
    struct AskedAllowance: Sendable {
        var occurrence: Date
        var number: Int
        var allowance: BillingMethods.SnoozeAllowance.Response?
    }

    /// The end of one try: the snooze, or the snooze billing must be asked about first.
    enum SnoozeTry: Sendable {
        case done(AlarmsMethods.Snooze.Response)
        case ask(occurrence: Date, number: Int)
    }

    /// The pending occurrence of the alarm and the number its next snooze would have, read
    /// without locks; nil when it has none (the transaction says why).
    func pendingSnooze(_ alarmId: String, actor: String) async throws -> (occurrence: Date, number: Int)? {
        try await store.database.transaction { c in
            guard let a = try await store.load(alarmId, on: c), a.isVisible(to: actor), a.deletedAt == nil, a.isActive, !a.isPaused,
                  let occurrence = a.nextFireDate, occurrence.timeIntervalSinceNow <= earlySlack else { return nil }
            return (occurrence, try await store.snoozeCount(alarmId: a.id, occurrence: occurrence, on: c) + 1)
        }
    }

    /// One try, in a transaction. Billing's answer is used when it was for this occurrence and
    /// this snooze's number, or when it named no policy (the alarm's own limit then applies,
    /// whichever the number); otherwise billing is asked again, except on the `lastTry`.
    private func snooze(_ req: AlarmsMethods.Snooze.Request, actor: String, asked: AskedAllowance?, lastTry: Bool) async throws -> SnoozeTry {
        try await outbox.transaction { c in
            guard let a = try await store.lock(req.alarmId, on: c), a.isVisible(to: actor), a.deletedAt == nil else {
                throw AlarmHandlers.notFound(req.alarmId)
            }
            let standing = try await store.tierStanding(of: actor, on: c)
            let minutes = try SnoozeRules.length(requested: req.minutes, alarmDefault: a.snoozeDurationMinutes, standing: standing)
            let now = Date()
            guard a.isActive, !a.isPaused, let occurrence = a.nextFireDate else {
                throw ServiceError(.validationFailed, "alarm \(a.id) has no pending occurrence to snooze")
            }
            guard occurrence.timeIntervalSince(now) <= earlySlack else {
                throw ServiceError(.validationFailed, "alarm \(a.id) has not fired yet; its next occurrence is \(ISOTime.format(occurrence))")
            }
            let count = try await store.lockSnoozeCount(alarmId: a.id, occurrence: occurrence, on: c)
            guard let asked, asked.occurrence == occurrence, asked.number == count + 1 || asked.allowance?.policy != true else {
                if lastTry {
                    throw ServiceError(.syncConflict, "alarm \(a.id) was snoozed by others at the same time; try again")
                }
                return .ask(occurrence: occurrence, number: count + 1)
            }
            let allowance = asked.allowance
            let limit = Self.limit(a, allowance)
            guard count < limit else {
                throw ServiceError(.snoozeLimitReached, "this occurrence was already snoozed \(limit) times; complete or skip it",
                                   details: .object(["snoozeCount": .number(Double(count)), "maxSnoozes": .number(Double(limit))]))
            }
            if let allowance, !allowance.allowed, let cost = allowance.costCents, let product = allowance.productId {
                throw ServiceError(.paymentRequired,
                                   String(format: "snooze %d of this alarm costs $%.2f: buy %@, record it with POST /v1/me/snooze-ledger, then snooze",
                                          count + 1, Double(cost) / 100, product),
                                   details: .object(["costCents": .number(Double(cost)), "productId": .string(product),
                                                     "occurrenceAt": .string(ISOTime.format(occurrence))]))
            }
            let refire = now.addingTimeInterval(Double(minutes) * 60)
            try await store.recordSnooze(alarmId: a.id, occurrence: occurrence, refireAt: refire, at: now, by: actor, on: c)
            let n = AlarmLifecycle.snoozed(a, until: refire, count: count + 1, at: now)
            try await store.update(n, on: c)
            let ownerTier = try await store.tier(of: a.ownerId, on: c)
            // The other members' screens and devices show the snooze (`alarm_changed`); the
            // event carries the new version, as an `alarm-upserted` would.
            let window = a.groupId == nil ? nil : try await store.groupSettings(group: a.groupId!, on: c).pendingWindowMinutes
            var state = AlarmChanges.state(n, ownerTier: ownerTier, missedWindowMinutes: window)
            let sync = AlarmSharing.syncMembers(before: nil, after: n, actor: actor)
            state.syncMembers = sync.isEmpty ? nil : sync
            let event = try outbox.envelope(AlarmsEvents.alarmSnoozed, AlarmsEvents.Snoozed(
                alarm: state, occurrenceAt: occurrence, refireAt: refire, snoozeCount: count + 1, userId: actor), actor: actor)
            try await store.record(events: outbox.rows([event]), feed: [AlarmChanges.feedChange(before: a, after: n)], on: c)
            return .done(AlarmsMethods.Snooze.Response(alarm: n, occurrenceAt: occurrence, refireAt: refire, snoozeCount: count + 1))
        }
    }
}
