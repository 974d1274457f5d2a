import Contracts
import Foundation
import Persistence
import PostgresNIO

/// The account's devices (push targets).
extension AccountsStore {
    static let deviceColumns = "device_id, platform, push_provider, push_token, webhook_url, app_version, timezone, locale, created_at, updated_at"

    static func decodeDevices(_ rows: PostgresRowSequence) async throws -> [Device] {
        var out: [Device] = []
        for try await r in rows.decode((String, String, String?, String?, String?, String?, String?, String?, Date, Date).self) {
            out.append(Device(deviceId: r.0, platform: r.1, pushProvider: r.2, pushToken: r.3, webhookUrl: r.4,
                              appVersion: r.5, timezone: r.6, locale: r.7, createdAt: r.8, updatedAt: r.9))
        }
        return out
    }

    /// The account's devices, oldest first.
    func devices(of uid: String) async throws -> [Device] {
        try await Self.decodeDevices(database.query(
            "SELECT \(unescaped: Self.deviceColumns) FROM devices WHERE user_id = \(uid) ORDER BY created_at"))
    }

    /// How many devices the account has besides `deviceId`.
    func deviceCount(of uid: String, besides deviceId: String, on c: PostgresConnection) async throws -> Int {
        try await c.query(
            "SELECT count(*)::int FROM devices WHERE user_id = \(uid) AND device_id <> \(deviceId)", logger: database.logger
        ).first(Int.self) ?? 0
    }

    /// Inserts or updates the device; nil when the account does not exist.
    func upsertDevice(_ d: DeviceUpsert, of uid: String, on c: PostgresConnection) async throws -> Device? {
        let rows = try await c.query("""
            INSERT INTO devices (user_id, device_id, platform, push_provider, push_token, webhook_url, app_version, timezone, locale)
            SELECT \(uid), \(d.deviceId), \(d.platform), \(d.pushProvider), \(d.pushToken), \(d.webhookUrl), \(d.appVersion), \(d.timezone), \(d.locale)
            WHERE EXISTS (SELECT 1 FROM users WHERE id = \(uid))
            ON CONFLICT (user_id, device_id) DO UPDATE SET platform = excluded.platform, push_provider = excluded.push_provider,
                push_token = excluded.push_token, webhook_url = excluded.webhook_url, app_version = excluded.app_version,
                timezone = excluded.timezone, locale = excluded.locale, updated_at = now()
            RETURNING \(unescaped: Self.deviceColumns)
            """, logger: database.logger)
        return try await Self.decodeDevices(rows).first
    }

    /// Deletes the device; returns whether it existed.
    func deleteDevice(_ deviceId: String, of uid: String, on c: PostgresConnection) async throws -> Bool {
        let rows = try await c.query("DELETE FROM devices WHERE user_id = \(uid) AND device_id = \(deviceId) RETURNING device_id", logger: database.logger)
        return try await rows.first(String.self) != nil
    }

    /// Deletes every device of the account; returns the ids and platforms of those it had.
    func deleteDevices(of uid: String, on c: PostgresConnection) async throws -> [(deviceId: String, platform: String)] {
        let rows = try await c.query("DELETE FROM devices WHERE user_id = \(uid) RETURNING device_id, platform", logger: database.logger)
        var out: [(deviceId: String, platform: String)] = []
        for try await (id, platform) in rows.decode((String, String).self) { out.append((deviceId: id, platform: platform)) }
        return out
    }
}
