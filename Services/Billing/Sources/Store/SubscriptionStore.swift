import BillingCore
import Contracts
import Foundation
import Logging
import Messaging
import Outbox
import Persistence
import PostgresNIO

/// Subscriptions, applied in the order of the stores' own timestamps, and the entitlement each
/// user resolves to (published when it changes).
struct SubscriptionStore: Sendable {
    let database: Database
    let outbox: OutboxWriter
    var logger: Logger { database.logger }

    /// A new state of one store subscription, as of `eventAt` (the store's timestamp).
    struct Update: Sendable {
        var id: String
        var userId: String
        var platform: StorePlatform
        var productId: String
        var tier: Tier
        var state: SubscriptionState
        var originalTransactionId: String
        var start: Date?
        var expiry: Date?
        var graceExpires: Date?
        var autoRenewing: Bool
        var cancelledAt: Date?
        var eventAt: Date
    }

    static let columns = """
        id, user_id, platform, product_id, tier, state, original_transaction_id, start_date, expiry_date, grace_expires_at, \
        auto_renewing, cancelled_at, updated_at
        """

    static func decode(_ rows: PostgresRowSequence) async throws -> [Subscription] {
        var out: [Subscription] = []
        for try await r in rows.decode((String, String, String, String, String, String, String, Date?, Date?, Date?, Bool, Date?, Date).self) {
            out.append(Subscription(id: r.0, uid: r.1, platform: StorePlatform(rawValue: r.2), productId: r.3, tier: Tier(rawValue: r.4) ?? .free,
                                    state: SubscriptionState(rawValue: r.5),
                                    originalTransactionId: r.6, startDate: r.7, expiryDate: r.8, gracePeriodExpiresAt: r.9, autoRenewing: r.10,
                                    cancelledAt: r.11, updatedAt: r.12))
        }
        return out
    }

    func lock(_ id: String, on c: PostgresConnection) async throws -> (Subscription, Date)? {
        let rows = try await c.query("SELECT last_event_at FROM subscriptions WHERE id = \(id) FOR UPDATE", logger: logger)
        guard let last = try await rows.first(Date.self) else { return nil }
        guard let s = try await Self.decode(c.query("SELECT \(unescaped: Self.columns) FROM subscriptions WHERE id = \(id)", logger: logger)).first
        else { return nil }
        return (s, last)
    }

    /// Applies `u` unless the store already told us something newer; returns whether it applied.
    @discardableResult
    func apply(_ u: Update, reason: String, on c: PostgresConnection) async throws -> Bool {
        let previous = try await lock(u.id, on: c)
        if let (_, last) = previous, last >= u.eventAt { return false }
        try await c.query("""
            INSERT INTO subscriptions (id, user_id, platform, product_id, tier, state, original_transaction_id, start_date, expiry_date,
                grace_expires_at, auto_renewing, cancelled_at, last_event_at, updated_at)
            VALUES (\(u.id), \(u.userId), \(u.platform.rawValue), \(u.productId), \(u.tier.rawValue), \(u.state.rawValue), \(u.originalTransactionId), \(u.start),
                \(u.expiry), \(u.graceExpires), \(u.autoRenewing), \(u.cancelledAt), \(u.eventAt), now())
            ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id, product_id = excluded.product_id, tier = excluded.tier,
                state = excluded.state, start_date = coalesce(excluded.start_date, subscriptions.start_date), expiry_date = excluded.expiry_date,
                grace_expires_at = excluded.grace_expires_at, auto_renewing = excluded.auto_renewing, cancelled_at = excluded.cancelled_at,
                last_event_at = excluded.last_event_at, updated_at = now()
            """, logger: logger)
        if let (old, _) = previous, old.uid != u.userId { try await resolve(old.uid, reason: reason, on: c) }
        try await resolve(u.userId, reason: reason, on: c)
        return true
    }

    func subscriptions(of user: String, on c: PostgresConnection) async throws -> [Subscription] {
        try await Self.decode(c.query("SELECT \(unescaped: Self.columns) FROM subscriptions WHERE user_id = \(user) ORDER BY id", logger: logger))
    }

    /// Resolves the user's tier now and publishes it if it changed.
    @discardableResult
    func resolve(_ user: String, reason: String, now: Date = Date(), on c: PostgresConnection) async throws -> Entitlement {
        let e = SubscriptionRules.entitlement(try await subscriptions(of: user, on: c), now: now)
        let rows = try await c.query("SELECT tier FROM entitlements WHERE user_id = \(user) FOR UPDATE", logger: logger)
        let previous = try await rows.first(String.self).flatMap(Tier.init(rawValue:)) ?? .free
        try await c.query("""
            INSERT INTO entitlements (user_id, tier, expires_at) VALUES (\(user), \(e.tier.rawValue), \(e.expiresAt))
            ON CONFLICT (user_id) DO UPDATE SET tier = excluded.tier, expires_at = excluded.expires_at, updated_at = now()
            """, logger: logger)
        if previous != e.tier {
            _ = try await outbox.append(BillingEvents.entitlementChanged,
                                        BillingEvents.EntitlementChanged(userId: user, tier: e.tier, previousTier: previous, expiresAt: e.expiresAt,
                                                                         reason: reason),
                                        actor: user, on: c)
        }
        return e
    }

    /// Records a store notification id; false if it was seen before.
    func firstTime(_ id: String, store: String, type: String, on c: PostgresConnection) async throws -> Bool {
        try await c.query("""
            INSERT INTO processed_notifications (id, store, type, result) VALUES (\(id), \(store), \(type), 'received')
            ON CONFLICT (id) DO NOTHING RETURNING id
            """, logger: logger).first(String.self) != nil
    }

    func noteResult(_ id: String, _ result: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE processed_notifications SET result = \(result) WHERE id = \(id)", logger: logger)
    }

    /// Moves a deleted account's subscriptions to the name `anonymous` (kept for the books); logs
    /// with `logger` (the event's).
    func anonymizeSubscriptions(of user: String, as anonymous: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("UPDATE subscriptions SET user_id = \(anonymous) WHERE user_id = \(user)", logger: logger)
    }

    /// Deletes the entitlement last resolved for `user`; logs with `logger` (the event's).
    func deleteEntitlement(of user: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("DELETE FROM entitlements WHERE user_id = \(user)", logger: logger)
    }

    // MARK: Expiry (the entitlement sweeper)

    /// Locks up to 1000 subscriptions whose time passed at `now` (`FOR UPDATE SKIP LOCKED`, so
    /// concurrent sweeps share them): active ones past their expiry and grace periods that
    /// ended, by expiry date.
    func dueForExpiry(now: Date, on c: PostgresConnection) async throws -> [Subscription] {
        try await Self.decode(c.query("""
            SELECT \(unescaped: Self.columns) FROM subscriptions
            WHERE (state = 'active' AND expiry_date <= \(now)) OR (state = 'grace' AND grace_expires_at <= \(now))
            ORDER BY expiry_date LIMIT 1000 FOR UPDATE SKIP LOCKED
            """, logger: logger))
    }

    /// Moves subscription `id` into its grace period, which ends at `graceExpires`.
    func enterGrace(_ id: String, until graceExpires: Date, on c: PostgresConnection) async throws {
        try await c.query("""
            UPDATE subscriptions SET state = 'grace', grace_expires_at = \(graceExpires), updated_at = now() WHERE id = \(id)
            """, logger: logger)
    }

    /// Marks subscription `id` expired.
    func expire(_ id: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE subscriptions SET state = 'expired', updated_at = now() WHERE id = \(id)", logger: logger)
    }
}
