import Foundation
import Logging
import PostgresNIO

/// Each user's plan as the accounts stream last told it: what lets a profile event that changed
/// the plan be told apart from one that changed the name.
extension NotificationStore {
    /// Records `tier` as `user`'s plan and returns the plan recorded before (nil: none yet, e.g.
    /// a user who signed up before this read model existed, or a new one).
    func noteTier(_ tier: String, of user: String, on c: PostgresConnection, logger: Logger) async throws -> String? {
        // The data-modifying CTE does not see its own write: `old` is the row as it was.
        let rows = try await c.query("""
            WITH old AS (SELECT tier FROM user_tiers WHERE user_id = \(user) FOR UPDATE),
            up AS (INSERT INTO user_tiers (user_id, tier) VALUES (\(user), \(tier))
                   ON CONFLICT (user_id) DO UPDATE SET tier = excluded.tier WHERE user_tiers.tier <> excluded.tier)
            SELECT tier FROM old
            """, logger: logger)
        return try await rows.decode(String.self).first(where: { _ in true })
    }

    /// Forgets a deleted user's plan.
    func deleteTier(of user: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("DELETE FROM user_tiers WHERE user_id = \(user)", logger: logger)
    }
}
