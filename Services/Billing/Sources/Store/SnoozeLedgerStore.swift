import Contracts
import Foundation
import Logging
import Persistence
import PostgresNIO

/// The SQL of the accountability snooze ledger (`snooze_ledger`: one row per paid snooze, per
/// store transaction) and of the owners' snooze policies (`snooze_policies`).
struct SnoozeLedgerStore: Sendable {
    let database: Database
    var logger: Logger { database.logger }

    /// The ledger columns, in the order `decode` reads them.
    static let columns = "transaction_id, alarm_id, occurrence_at, sequence, amount_cents, product_id, purchased_at"

    /// Ledger entries from rows of `columns`.
    static func decode(_ rows: PostgresRowSequence) async throws -> [SnoozeLedgerEntry] {
        var out: [SnoozeLedgerEntry] = []
        for try await r in rows.decode((String, String, Date, Int32, Int32, String, Date).self) {
            out.append(SnoozeLedgerEntry(transactionId: r.0, alarmId: r.1, occurrenceAt: r.2, sequence: Int(r.3), amountCents: Int(r.4),
                                         productId: r.5, purchasedAt: r.6))
        }
        return out
    }

    /// Sets the snooze policy of an alarm owned by `owner` (the owner is kept from the first time).
    func putPolicy(_ p: SnoozePolicy, owner: String) async throws {
        try await database.query("""
            INSERT INTO snooze_policies (alarm_id, owner_id, enabled, free_snoozes) VALUES (\(p.alarmId), \(owner), \(p.enabled), \(Int32(p.freeSnoozes)))
            ON CONFLICT (alarm_id) DO UPDATE SET enabled = excluded.enabled, free_snoozes = excluded.free_snoozes, updated_at = now()
            """)
    }

    /// The free snoozes of the alarm's policy, or nil if it has no enabled policy.
    func freeSnoozes(alarm: String) async throws -> Int? {
        let rows = try await database.query("SELECT free_snoozes FROM snooze_policies WHERE alarm_id = \(alarm) AND enabled")
        return try await rows.first(Int32.self).map(Int.init)
    }

    /// How many paid snoozes `user` recorded for this occurrence of the alarm (outside a transaction).
    func paidSnoozes(user: String, alarm: String, occurrenceAt: Date) async throws -> Int {
        try await database.query("""
            SELECT count(*)::int FROM snooze_ledger WHERE user_id = \(user) AND alarm_id = \(alarm) AND occurrence_at = \(occurrenceAt)
            """).first(Int.self) ?? 0
    }

    /// How many paid snoozes `user` recorded for this occurrence of the alarm, in `c`'s transaction.
    func paidSnoozes(user: String, alarm: String, occurrenceAt: Date, on c: PostgresConnection) async throws -> Int {
        try await c.query("""
            SELECT count(*)::int FROM snooze_ledger WHERE user_id = \(user) AND alarm_id = \(alarm) AND occurrence_at = \(occurrenceAt)
            """, logger: logger).first(Int.self) ?? 0
    }

    /// The entry already recorded for this store transaction by `user`, if any.
    /// The entry of `transactionId` whoever recorded it, with that user.
    func entry(transactionId: String, on c: PostgresConnection) async throws -> (SnoozeLedgerEntry, String)? {
        let rows = try await c.query("SELECT user_id FROM snooze_ledger WHERE transaction_id = \(transactionId)", logger: logger)
        guard let owner = try await rows.first(String.self),
              let entry = try await entry(transactionId: transactionId, user: owner, on: c) else { return nil }
        return (entry, owner)
    }

    func entry(transactionId: String, user: String, on c: PostgresConnection) async throws -> SnoozeLedgerEntry? {
        try await Self.decode(c.query(
            "SELECT \(unescaped: Self.columns) FROM snooze_ledger WHERE transaction_id = \(transactionId) AND user_id = \(user)",
            logger: logger)).first
    }

    /// Serializes recording paid snoozes of `user` until the transaction ends (`pg_advisory_xact_lock`).
    func lockUser(_ user: String, on c: PostgresConnection) async throws {
        try await c.lockUntilCommit(user, hash: .legacy32, logger: logger)
    }

    /// Records the `sequence`-th paid snooze of an occurrence, bought by store transaction
    /// `transactionId`, and returns it. (Traps if the insert returns no row, as it did in the handler.)
    func insert(transactionId: String, user: String, alarm: String, occurrenceAt: Date, sequence: Int, amountCents: Int, productId: String,
                purchasedAt: Date, on c: PostgresConnection) async throws -> SnoozeLedgerEntry {
        try await Self.decode(c.query("""
            INSERT INTO snooze_ledger (transaction_id, user_id, alarm_id, occurrence_at, sequence, amount_cents, product_id, purchased_at)
            VALUES (\(transactionId), \(user), \(alarm), \(occurrenceAt), \(Int32(sequence)), \(Int32(amountCents)), \(productId),
                    \(purchasedAt))
            RETURNING \(unescaped: Self.columns)
            """, logger: logger)).first!
    }

    /// Every ledger entry of `user`, newest purchase first.
    func entries(of user: String) async throws -> [SnoozeLedgerEntry] {
        try await Self.decode(database.query("""
            SELECT \(unescaped: Self.columns) FROM snooze_ledger WHERE user_id = \(user) ORDER BY purchased_at DESC
            """))
    }

    /// Moves a deleted account's ledger entries to the name `anonymous` (kept for the books);
    /// logs with `logger` (the event's).
    func anonymizeLedger(of user: String, as anonymous: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("UPDATE snooze_ledger SET user_id = \(anonymous) WHERE user_id = \(user)", logger: logger)
    }

    /// Deletes the snooze policies owned by `owner`; logs with `logger` (the event's).
    func deletePolicies(ownedBy owner: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("DELETE FROM snooze_policies WHERE owner_id = \(owner)", logger: logger)
    }
}
