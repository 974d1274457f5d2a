import Contracts
import Crypto
import Foundation
import Messaging
import Persistence
import PostgresNIO

/// SQL of the accounts schema.
struct AccountsStore: Sendable {
    let database: Database

    static let userColumns = """
        id, email, display_name, photo_url, tier, settings::text, platform, app_version, fcm_token, migrated_at, created_at, updated_at,
        email_verified_at
        """

    static func decodeUsers(_ rows: PostgresRowSequence) async throws -> [User] {
        var users: [User] = []
        for try await row in rows {
            let r = try row.decode((String, String, String, String?, String, String, String?, String?, String?, Date?, Date, Date, Date?).self)
            let settings = try JSONCoding.decoder().decode(UserSettings.self, from: Data(r.5.utf8))
            users.append(User(uid: r.0, email: r.1, displayName: r.2, photoURL: r.3, tier: Tier(rawValue: r.4) ?? .free,
                              createdAt: r.10, updatedAt: r.11, migratedAt: r.9, settings: settings,
                              platform: r.6, appVersion: r.7, fcmToken: r.8, emailVerifiedAt: r.12))
        }
        return users
    }

    func user(id: String, on connection: PostgresConnection? = nil) async throws -> User? {
        let query: PostgresQuery = "SELECT \(unescaped: Self.userColumns) FROM users WHERE id = \(id)"
        if let connection {
            return try await Self.decodeUsers(connection.query(query, logger: database.logger)).first
        }
        return try await Self.decodeUsers(database.query(query)).first
    }

    /// Inserts a user; nil when the email is taken.
    func insertUser(id: String, email: String, emailKey: String? = nil, passwordHash: String, displayName: String, settings: UserSettings,
                    platform: String?, on c: PostgresConnection) async throws -> User? {
        let settingsJSON = String(decoding: try JSONCoding.encode(settings), as: UTF8.self)
        let rows = try await c.query("""
            INSERT INTO users (id, email, email_key, password_hash, display_name, settings, platform)
            VALUES (\(id), \(email), \(emailKey ?? email.lowercased()), \(passwordHash), \(displayName), \(settingsJSON)::jsonb, \(platform))
            ON CONFLICT (email_key) DO NOTHING
            RETURNING \(unescaped: Self.userColumns)
            """, logger: database.logger)
        return try await Self.decodeUsers(rows).first
    }

    /// The user id and password hash for an email.
    func credentials(email: String) async throws -> (id: String, email: String, hash: String)? {
        let rows = try await database.query("SELECT id, email, password_hash FROM users WHERE email_key = \(email.lowercased())")
        for try await (id, email, hash) in rows.decode((String, String, String).self) { return (id, email, hash) }
        return nil
    }

    // MARK: Sessions and refresh tokens

    static func tokenHash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    static func newRefreshToken() -> String {
        var rng = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: 32)
        for k in 0..<32 { bytes[k] = rng.next() }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Starts a session with its first refresh token; returns (session id, refresh token).
    func startSession(userID: String, refreshTTL: Duration, on c: PostgresConnection) async throws -> (String, String) {
        let session = UUIDv7.string()
        try await c.query("INSERT INTO sessions (id, user_id) VALUES (\(session), \(userID))", logger: database.logger)
        let token = try await issueRefreshToken(session: session, userID: userID, refreshTTL: refreshTTL, on: c)
        return (session, token)
    }

    func issueRefreshToken(session: String, userID: String, refreshTTL: Duration, on c: PostgresConnection) async throws -> String {
        let token = Self.newRefreshToken()
        let seconds = Int(refreshTTL.components.seconds)
        try await c.query("""
            INSERT INTO refresh_tokens (token_hash, session_id, user_id, expires_at)
            VALUES (\(Self.tokenHash(token)), \(session), \(userID), now() + make_interval(secs => \(seconds)))
            """, logger: database.logger)
        return token
    }

    struct RefreshRow {
        var session: String
        var userID: String
        var expired: Bool
        var rotated: Bool
        var revoked: Bool
    }

    func lockRefreshToken(_ token: String, on c: PostgresConnection) async throws -> RefreshRow? {
        let rows = try await c.query("""
            SELECT t.session_id, t.user_id, t.expires_at < now(), t.rotated_at IS NOT NULL, s.revoked_at IS NOT NULL
            FROM refresh_tokens t JOIN sessions s ON s.id = t.session_id
            WHERE t.token_hash = \(Self.tokenHash(token)) FOR UPDATE OF t, s
            """, logger: database.logger)
        for try await r in rows.decode((String, String, Bool, Bool, Bool).self) {
            return RefreshRow(session: r.0, userID: r.1, expired: r.2, rotated: r.3, revoked: r.4)
        }
        return nil
    }

    /// Revokes a session; returns whether it was active.
    @discardableResult
    func revokeSession(_ session: String, reason: String, on c: PostgresConnection) async throws -> Bool {
        let rows = try await c.query("""
            UPDATE sessions SET revoked_at = now(), revoke_reason = \(reason) WHERE id = \(session) AND revoked_at IS NULL RETURNING id
            """, logger: database.logger)
        return try await rows.first(String.self) != nil
    }

    // MARK: Devices

    static let deviceColumns = "device_id, platform, push_provider, push_token, webhook_url, app_version, timezone, locale, created_at, updated_at"

    static func decodeDevices(_ rows: PostgresRowSequence) async throws -> [Device] {
        var out: [Device] = []
        for try await r in rows.decode((String, String, String?, String?, String?, String?, String?, String?, Date, Date).self) {
            out.append(Device(deviceId: r.0, platform: r.1, pushProvider: r.2, pushToken: r.3, webhookUrl: r.4,
                              appVersion: r.5, timezone: r.6, locale: r.7, createdAt: r.8, updatedAt: r.9))
        }
        return out
    }
}
