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

    /// `owner`'s live active alarms after the first `limit` of them in order of next fire date
    /// (nulls last), then creation: those beyond the limit.
    func activeAlarmIDs(ownedBy owner: String, beyond limit: Int, on c: PostgresConnection) async throws -> [String] {
        try await c.query("""
            SELECT id FROM alarms WHERE owner_id = \(owner) AND is_active AND deleted_at IS NULL
            ORDER BY next_fire_date ASC NULLS LAST, created_at ASC OFFSET \(limit)
            """, logger: logger).all(String.self)
    }
}
