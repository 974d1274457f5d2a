import Contracts
import Foundation
import Messaging
import Persistence
import PostgresNIO

/// The accountability snooze ledger: each paid snooze of an occurrence costs more than the one
/// before ($0.99, $1.99, … $4.99; at most 5), bought as a store consumable verified like any
/// transaction and recorded once per transaction.
struct SnoozeLedgerHandlers: Sendable {
    let database: Database
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
        try await database.query("""
            INSERT INTO snooze_policies (alarm_id, owner_id, enabled, free_snoozes) VALUES (\(p.alarmId), \(actor), \(p.enabled), \(Int32(p.freeSnoozes)))
            ON CONFLICT (alarm_id) DO UPDATE SET enabled = excluded.enabled, free_snoozes = excluded.free_snoozes, updated_at = now()
            """)
        return p
    }

    func allowance(_ r: BillingMethods.SnoozeAllowance.Request) async throws -> BillingMethods.SnoozeAllowance.Response {
        let rows = try await database.query("SELECT free_snoozes FROM snooze_policies WHERE alarm_id = \(r.alarmId) AND enabled")
        guard let free = try await rows.first(Int32.self).map(Int.init) else {
            return .init(policy: false, maxSnoozes: Self.usualLimit, allowed: r.snoozeNumber <= Self.usualLimit, costCents: nil, productId: nil)
        }
        guard r.snoozeNumber <= Self.policyLimit else {
            return .init(policy: true, maxSnoozes: Self.policyLimit, allowed: false, costCents: nil, productId: nil)
        }
        let paidNeeded = r.snoozeNumber - free
        if paidNeeded <= 0 { return .init(policy: true, maxSnoozes: Self.policyLimit, allowed: true, costCents: nil, productId: nil) }
        let paid = try await database.query("""
            SELECT count(*)::int FROM snooze_ledger WHERE user_id = \(r.userId) AND alarm_id = \(r.alarmId) AND occurrence_at = \(r.occurrenceAt)
            """).first(Int.self) ?? 0
        if paid >= paidNeeded { return .init(policy: true, maxSnoozes: Self.policyLimit, allowed: true, costCents: nil, productId: nil) }
        return .init(policy: true, maxSnoozes: Self.policyLimit, allowed: false, costCents: Self.cost(paid + 1), productId: Self.products(paid + 1).ios)
    }

    static let columns = "transaction_id, alarm_id, occurrence_at, sequence, amount_cents, product_id, purchased_at"

    static func decode(_ rows: PostgresRowSequence) async throws -> [SnoozeLedgerEntry] {
        var out: [SnoozeLedgerEntry] = []
        for try await r in rows.decode((String, String, Date, Int32, Int32, String, Date).self) {
            out.append(SnoozeLedgerEntry(transactionId: r.0, alarmId: r.1, occurrenceAt: r.2, sequence: Int(r.3), amountCents: Int(r.4),
                                         productId: r.5, purchasedAt: r.6))
        }
        return out
    }

    func record(_ req: BillingMethods.PaidSnooze.Request, user: String) async throws -> SnoozeLedgerEntry {
        let t = try await apple.transaction(req.signedTransaction)
        return try await database.transaction { c in
            if let existing = try await Self.decode(c.query(
                "SELECT \(unescaped: Self.columns) FROM snooze_ledger WHERE transaction_id = \(t.transactionId) AND user_id = \(user)",
                logger: database.logger)).first {
                return existing
            }
            try await c.query("SELECT pg_advisory_xact_lock(hashtext(\(user)))", logger: database.logger)
            let paid = try await c.query("""
                SELECT count(*)::int FROM snooze_ledger WHERE user_id = \(user) AND alarm_id = \(req.alarmId) AND occurrence_at = \(req.occurrenceAt)
                """, logger: database.logger).first(Int.self) ?? 0
            let n = paid + 1
            guard n <= Self.maxPaid else {
                throw ServiceError(.snoozeLimitReached, "this occurrence was already snoozed \(Self.maxPaid) times")
            }
            guard t.productId == Self.products(n).ios else {
                throw ServiceError(.validationFailed, String(format: "snooze %d costs $%.2f: buy %@, not %@", n, Double(Self.cost(n)) / 100,
                                                             Self.products(n).ios, t.productId))
            }
            return try await Self.decode(c.query("""
                INSERT INTO snooze_ledger (transaction_id, user_id, alarm_id, occurrence_at, sequence, amount_cents, product_id, purchased_at)
                VALUES (\(t.transactionId), \(user), \(req.alarmId), \(req.occurrenceAt), \(Int32(n)), \(Int32(Self.cost(n))), \(t.productId),
                        \((t.purchaseDate ?? t.signedDate).msDate))
                RETURNING \(unescaped: Self.columns)
                """, logger: database.logger)).first!
        }
    }

    func ledger(_ user: String, now: Date = Date()) async throws -> SnoozeLedger {
        let all = try await Self.decode(database.query("""
            SELECT \(unescaped: Self.columns) FROM snooze_ledger WHERE user_id = \(user) ORDER BY purchased_at DESC
            """))
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
