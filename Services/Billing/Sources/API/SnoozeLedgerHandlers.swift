import Contracts
import Foundation
import Messaging
import Persistence
import PostgresNIO

/// The accountability snooze ledger: each paid snooze of an occurrence costs more than the one
/// before ($0.99, $1.99, … $4.99; at most 5), bought as a store consumable verified like any
/// transaction and recorded once per transaction.
struct SnoozeLedgerHandlers: Sendable {
    let store: SnoozeLedgerStore
    let apple: AppleVerifier
    /// To check that a policy is set by the alarm's owner.
    let alarms: RPCClient

    static let maxPaid = 5

    /// The price of the `n`-th paid snooze of an occurrence, in cents.
    static func cost(_ n: Int) -> Int { n * 100 - 1 }

    /// The consumable that pays for the `n`-th snooze (iOS, Android).
    static func products(_ n: Int) -> (ios: String, android: String) { ("com.chronir.snooze.\(n)", "chronir_snooze_\(n)") }

    func register(into router: inout RPCRouter) {
        router.on(BillingMethods.Ledger.self) { _, ctx in try await ledger(try ctx.requireActor()) }
        router.on(BillingMethods.PaidSnooze.self) { req, ctx in try await record(req, user: try ctx.requireActor()) }
        router.on(BillingMethods.PutSnoozePolicy.self) { req, ctx in try await putPolicy(req, ctx: ctx) }
        router.on(BillingMethods.SnoozeAllowance.self) { req, _ in try await allowance(req) }
    }

    /// The usual limit without a policy (alarms enforces it), and the total with one.
    static let usualLimit = 3
    static let policyLimit = 5

    func putPolicy(_ p: SnoozePolicy, ctx: RPCContext) async throws -> SnoozePolicy {
        let actor = try ctx.requireActor()
        guard (0...Self.policyLimit - 1).contains(p.freeSnoozes) else {
            throw ServiceError(.validationFailed, "freeSnoozes must be 0...\(Self.policyLimit - 1)")
        }
        let alarm = try await alarms.call(AlarmsMethods.Get.self, .init(id: p.alarmId), actor: actor, headers: ctx.envelope.headers)
        guard alarm.ownerId == actor else { throw ServiceError(.permissionDenied, "only the owner sets the snooze policy of alarm \(alarm.id)") }
        try await store.putPolicy(p, owner: actor)
        return p
    }

    func allowance(_ r: BillingMethods.SnoozeAllowance.Request) async throws -> BillingMethods.SnoozeAllowance.Response {
        guard let free = try await store.freeSnoozes(alarm: r.alarmId) else {
            return .init(policy: false, maxSnoozes: Self.usualLimit, allowed: r.snoozeNumber <= Self.usualLimit, costCents: nil, productId: nil)
        }
        guard r.snoozeNumber <= Self.policyLimit else {
            return .init(policy: true, maxSnoozes: Self.policyLimit, allowed: false, costCents: nil, productId: nil)
        }
        let paidNeeded = r.snoozeNumber - free
        if paidNeeded <= 0 { return .init(policy: true, maxSnoozes: Self.policyLimit, allowed: true, costCents: nil, productId: nil) }
        let paid = try await store.paidSnoozes(user: r.userId, alarm: r.alarmId, occurrenceAt: r.occurrenceAt)
        if paid >= paidNeeded { return .init(policy: true, maxSnoozes: Self.policyLimit, allowed: true, costCents: nil, productId: nil) }
        return .init(policy: true, maxSnoozes: Self.policyLimit, allowed: false, costCents: Self.cost(paid + 1), productId: Self.products(paid + 1).ios)
    }

    func record(_ req: BillingMethods.PaidSnooze.Request, user: String) async throws -> SnoozeLedgerEntry {
        let t = try await apple.transaction(req.signedTransaction)
        return try await store.database.transaction { c in
            if let existing = try await store.entry(transactionId: t.transactionId, user: user, on: c) {
                return existing
            }
            try await store.lockUser(user, on: c)
            let paid = try await store.paidSnoozes(user: user, alarm: req.alarmId, occurrenceAt: req.occurrenceAt, on: c)
            let n = paid + 1
            guard n <= Self.maxPaid else {
                throw ServiceError(.snoozeLimitReached, "this occurrence was already snoozed \(Self.maxPaid) times")
            }
            guard t.productId == Self.products(n).ios else {
                throw ServiceError(.validationFailed, String(format: "snooze %d costs $%.2f: buy %@, not %@", n, Double(Self.cost(n)) / 100,
                                                             Self.products(n).ios, t.productId))
            }
            return try await store.insert(transactionId: t.transactionId, user: user, alarm: req.alarmId, occurrenceAt: req.occurrenceAt,
                                          sequence: n, amountCents: Self.cost(n), productId: t.productId,
                                          purchasedAt: (t.purchaseDate ?? t.signedDate).msDate, on: c)
        }
    }

    func ledger(_ user: String, now: Date = Date()) async throws -> SnoozeLedger {
        let all = try await store.entries(of: user)
        let (current, longest) = Self.streaks(all.map(\.purchasedAt), now: now)
        return SnoozeLedger(entries: Array(all.prefix(100)), totalCents: all.reduce(0) { $0 + $1.amountCents }, totalSnoozes: all.count,
                            currentStreakDays: current, longestStreakDays: longest)
    }

    /// Whole days since the last paid snooze, and the longest such gap (UTC days).
    static func streaks(_ dates: [Date], now: Date) -> (current: Int, longest: Int) {
        let days = Set(dates.map { Int(($0.timeIntervalSince1970 / 86_400).rounded(.down)) }).sorted()
        let today = Int((now.timeIntervalSince1970 / 86_400).rounded(.down))
        guard let last = days.last else { return (0, 0) }
        let current = max(0, today - last)
        var longest = current
        for (a, b) in zip(days, days.dropFirst()) { longest = max(longest, b - a - 1) }
        return (current, longest)
    }
}
