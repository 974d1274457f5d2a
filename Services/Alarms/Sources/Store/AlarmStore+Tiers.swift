import AlarmsCore
import Contracts
import Foundation
import Persistence
import PostgresNIO

/// The SQL of the user-tier read model and of enforcing a tier's alarm limit.
extension AlarmStore {
    /// Records `user`'s tier.
    func setTier(_ tier: Tier, of user: String, on c: PostgresConnection) async throws {
        try await c.query("""
            INSERT INTO user_tiers (user_id, tier) VALUES (\(user), \(tier.rawValue))
            ON CONFLICT (user_id) DO UPDATE SET tier = excluded.tier, updated_at = now()
            """, logger: logger)
    }

    /// The highest tier among `users` (Free when none is known).
    func bestTier(of users: [String]) async throws -> Tier {
        var best = Tier.free
        for try await tier in try await database.query("SELECT tier FROM user_tiers WHERE user_id = ANY(\(users)::text[])").decode(String.self) {
            best = max(best, Tier(rawValue: tier) ?? .free)
        }
        return best
    }

    /// `user`'s tier with what a lapsed subscription took away (``TierStanding``).
    func tierStanding(of user: String, on c: PostgresConnection) async throws -> TierStanding {
        let rows = try await c.query("SELECT tier, lapsed_from, lapsed_at FROM user_tiers WHERE user_id = \(user)", logger: logger)
        for try await (tier, lapsed, at) in rows.decode((String, String?, Date?).self) {
            return TierStanding(tier: Tier(rawValue: tier) ?? .free, lapsedFrom: lapsed.flatMap(Tier.init(rawValue:)), lapsedAt: at)
        }
        return TierStanding(tier: .free)
    }

    /// Records what a lapsed subscription took from `user` (nil: nothing, or given back).
    func setLapse(_ standing: TierStanding, of user: String, on c: PostgresConnection) async throws {
        try await c.query("""
            UPDATE user_tiers SET lapsed_from = \(standing.lapsedFrom?.rawValue), lapsed_at = \(standing.lapsedAt) WHERE user_id = \(user)
            """, logger: logger)
    }

    /// `owner`'s live active alarms after the first `limit` of them in order of next fire date
    /// (nulls last), then creation: those beyond the limit.
    func activeAlarmIDs(ownedBy owner: String, beyond limit: Int, on c: PostgresConnection) async throws -> [String] {
        try await c.query("""
            SELECT id FROM alarms WHERE owner_id = \(owner) AND is_active AND deleted_at IS NULL
            ORDER BY next_fire_date ASC NULLS LAST, created_at ASC OFFSET \(limit)
            """, logger: logger).all(String.self)
    }
}
