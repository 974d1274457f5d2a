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
    /// Verifies and consumes Android purchases; nil when Google Play is not configured.
    let play: PlayClient?
    /// Where paid snoozes go, shown with the ledger (`CHRONIR_CHARITY_*`).
    let charity: Charity?
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
        return .init(policy: true, maxSnoozes: Self.policyLimit, allowed: false, costCents: Self.cost(paid + 1), productId: Self.products(paid + 1).ios,
                     androidProductId: Self.products(paid + 1).android)
    }

    func record(_ req: BillingMethods.PaidSnooze.Request, user: String) async throws -> SnoozeLedgerEntry {
        switch (req.signedTransaction, req.purchaseToken) {
        case (let jws?, nil): return try await recordApple(req, jws: jws, user: user)
        case (nil, let token?): return try await recordPlay(req, token: token, user: user)
        default: throw ServiceError(.validationFailed, "give exactly one of signedTransaction (iOS) and purchaseToken (Android)")
        }
    }

    /// An Android paid snooze: the Play purchase of the consumable this snooze costs
    /// (`chronir_snooze_<n>`) is checked with the Play Developer API, recorded once (by its
    /// order id) and consumed, so one purchase pays for one snooze.
    func recordPlay(_ req: BillingMethods.PaidSnooze.Request, token: String, user: String) async throws -> SnoozeLedgerEntry {
        // A deployment without Google Play takes no Android purchases: a stable refusal of the
        // request, not an outage (503 stays for Google unreachable).
        guard let play else {
            throw ServiceError(.validationFailed, "this server takes no Google Play purchases (CHRONIR_PLAY_CREDENTIALS_FILE is not set)",
                               details: .object(["field": .string("purchaseToken")]))
        }
        guard !token.isEmpty, token.utf8.count <= 4096 else { throw ServiceError(.validationFailed, "purchaseToken must be 1–4096 bytes") }
        // The purchase this snooze needs: its rank decides the product the token must be of.
        let paid = try await store.paidSnoozes(user: user, alarm: req.alarmId, occurrenceAt: req.occurrenceAt)
        let candidates = [paid + 1, paid].filter { (1...Self.maxPaid).contains($0) }
        var found: (n: Int, purchase: PlayClient.ProductPurchase)?
        for n in candidates {
            // A repeat of a recorded purchase is of the previous rank: looked up second. Only
            // "no such purchase" moves on; Google unreachable or refusing us is said as such.
            do {
                found = (n, try await play.product(Self.products(n).android, token: token))
                break
            } catch let e as ServiceError where e.code == .receiptInvalid {
                continue
            }
        }
        guard let (n, purchase) = found else {
            guard paid < Self.maxPaid else { throw ServiceError(.snoozeLimitReached, "this occurrence was already snoozed \(Self.maxPaid) times") }
            throw ServiceError(.receiptInvalid, "Google Play knows no purchase of \(Self.products(paid + 1).android) with this token")
        }
        // The app sets the buyer's uid as the purchase's obfuscated account id (as iOS sets
        // appAccountToken): another account cannot spend it.
        if let owner = purchase.obfuscatedAccountId, owner.lowercased() != user.lowercased() {
            throw ServiceError(.permissionDenied, "this purchase was bought by another account")
        }
        guard purchase.purchaseState == 0 else {
            throw ServiceError(.receiptInvalid, purchase.purchaseState == 2 ? "the purchase is still pending" : "the purchase was cancelled")
        }
        let product = Self.products(n).android
        let transactionId = "play:" + (purchase.orderId ?? token)
        let entry: SnoozeLedgerEntry = try await store.database.transaction { c in
            if let (existing, owner) = try await store.entry(transactionId: transactionId, on: c) {
                guard owner == user else { throw ServiceError(.permissionDenied, "this purchase was recorded for another account") }
                return existing
            }
            guard purchase.consumptionState == 0 else { throw ServiceError(.receiptInvalid, "this purchase was already used") }
            try await store.lockUser(user, on: c)
            let now = try await store.paidSnoozes(user: user, alarm: req.alarmId, occurrenceAt: req.occurrenceAt, on: c)
            guard now + 1 == n else {
                throw ServiceError(.validationFailed, String(format: "snooze %d costs $%.2f: buy %@, not %@", now + 1,
                                                             Double(Self.cost(now + 1)) / 100, Self.products(now + 1).android, product))
            }
            return try await store.insert(transactionId: transactionId, user: user, alarm: req.alarmId, occurrenceAt: req.occurrenceAt,
                                          sequence: n, amountCents: Self.cost(n), productId: product,
                                          purchasedAt: purchase.purchaseTime ?? Date(), on: c)
        }
        // Consumed after it is recorded (a failure here leaves it recorded and unconsumed: the
        // same request again consumes it).
        if purchase.consumptionState == 0 {
            do { try await play.consume(product, token: token) } catch {
                store.database.logger.warning("a paid snooze was recorded but not consumed at Google Play; a repeat consumes it",
                                              metadata: ["error": "\(error)", "transaction": "\(transactionId)"])
            }
        }
        return entry
    }

    func recordApple(_ req: BillingMethods.PaidSnooze.Request, jws: String, user: String) async throws -> SnoozeLedgerEntry {
        let t = try await apple.transaction(jws)
        if let token = t.appAccountToken, token.lowercased() != user.lowercased() {
            throw ServiceError(.permissionDenied, "this transaction was bought by another account (its appAccountToken is not yours)")
        }
        return try await store.database.transaction { c in
            if let (existing, owner) = try await store.entry(transactionId: t.transactionId, on: c) {
                guard owner == user else { throw ServiceError(.permissionDenied, "this transaction was recorded for another account") }
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
        var ledger = SnoozeLedger(entries: Array(all.prefix(100)), totalCents: all.reduce(0) { $0 + $1.amountCents }, totalSnoozes: all.count,
                                  currentStreakDays: current, longestStreakDays: longest)
        let (week, month) = Self.periods(now)
        let thisWeek = all.filter { $0.purchasedAt >= week }, thisMonth = all.filter { $0.purchasedAt >= month }
        ledger.currentWeekCents = thisWeek.reduce(0) { $0 + $1.amountCents }
        ledger.currentWeekSnoozes = thisWeek.count
        ledger.currentMonthCents = thisMonth.reduce(0) { $0 + $1.amountCents }
        ledger.currentMonthSnoozes = thisMonth.count
        ledger.charity = charity
        return ledger
    }

    /// The starts of `now`'s ISO week (Monday 00:00) and calendar month, in UTC.
    static func periods(_ now: Date) -> (week: Date, month: Date) {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let week = calendar.dateInterval(of: .weekOfYear, for: now)?.start ?? now
        let month = calendar.dateInterval(of: .month, for: now)?.start ?? now
        return (week, month)
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
