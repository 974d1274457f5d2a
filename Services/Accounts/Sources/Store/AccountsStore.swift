import Contracts
import Foundation
import Messaging
import Persistence
import PostgresNIO

/// SQL of the accounts schema.
struct AccountsStore: Sendable {
    let database: Database

    static let userColumns = """
        id, email, display_name, photo_url, tier, settings::text, platform, app_version, fcm_token, migrated_at, created_at, updated_at,
        email_verified_at, analytics_consent, home_timezone
        """

    static func decodeUsers(_ rows: PostgresRowSequence) async throws -> [User] {
        var users: [User] = []
        for try await row in rows {
            let r = try row.decode((String, String, String, String?, String, String, String?, String?, String?, Date?, Date, Date, Date?, Bool, String?).self)
            let settings = try JSONCoding.decoder().decode(UserSettings.self, from: Data(r.5.utf8))
            users.append(User(uid: r.0, email: r.1, displayName: r.2, photoURL: r.3, tier: Tier(rawValue: r.4) ?? .free,
                              createdAt: r.10, updatedAt: r.11, migratedAt: r.9, settings: settings,
                              platform: r.6, appVersion: r.7, fcmToken: r.8, emailVerifiedAt: r.12,
                              analyticsConsent: r.13, homeTimezone: r.14))
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
            VALUES (\(id), \(email), \(emailKey ?? EmailKey.normalize(email)), \(passwordHash), \(displayName), \(settingsJSON)::jsonb, \(platform))
            ON CONFLICT (email_key) DO NOTHING
            RETURNING \(unescaped: Self.userColumns)
            """, logger: database.logger)
        return try await Self.decodeUsers(rows).first
    }

    /// The user id and password hash for an email.
    func credentials(email: String) async throws -> (id: String, email: String, hash: String)? {
        let rows = try await database.query("SELECT id, email, password_hash FROM users WHERE email_key = \(EmailKey.normalize(email))")
        for try await (id, email, hash) in rows.decode((String, String, String).self) { return (id, email, hash) }
        return nil
    }

    /// The id of the account whose sign-in key is `email` (its ``EmailKey`` form).
    func userID(email: String, on c: PostgresConnection) async throws -> String? {
        try await c.query("SELECT id FROM users WHERE email_key = \(EmailKey.normalize(email))", logger: database.logger).first(String.self)
    }

    /// Whether an account's sign-in key is `email` (its ``EmailKey`` form).
    func emailTaken(_ email: String, on c: PostgresConnection) async throws -> Bool {
        try await c.query("SELECT 1 FROM users WHERE email_key = \(EmailKey.normalize(email))", logger: database.logger)
            .first(Int.self) != nil
    }

    /// The accounts a password-reset mail for sign-in key `key` goes to (those with an email).
    func resetRecipients(emailKey key: String, on c: PostgresConnection) async throws -> [(uid: String, email: String, name: String)] {
        let rows = try await c.query("SELECT id, email, display_name FROM users WHERE email_key = \(key) AND email <> ''",
                                     logger: database.logger)
        var out: [(uid: String, email: String, name: String)] = []
        for try await (uid, email, name) in rows.decode((String, String, String).self) { out.append((uid: uid, email: email, name: name)) }
        return out
    }

    // MARK: Profile and credentials

    /// Writes the editable profile of `user` (settings included) to row `uid`; nil when the row is gone.
    func updateProfile(of uid: String, to user: User, on c: PostgresConnection) async throws -> User? {
        let settingsJSON = String(decoding: try JSONCoding.encode(user.settings), as: UTF8.self)
        let rows = try await c.query("""
            UPDATE users SET display_name = \(user.displayName), photo_url = \(user.photoURL), platform = \(user.platform),
                app_version = \(user.appVersion), migrated_at = \(user.migratedAt), fcm_token = \(user.fcmToken),
                settings = \(settingsJSON)::jsonb, analytics_consent = \(user.analyticsConsent), home_timezone = \(user.homeTimezone),
                updated_at = now()
            WHERE id = \(uid) RETURNING \(unescaped: Self.userColumns)
            """, logger: database.logger)
        return try await Self.decodeUsers(rows).first
    }

    /// Sets the account's tier.
    func setTier(_ tier: Tier, of uid: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE users SET tier = \(tier.rawValue), updated_at = now() WHERE id = \(uid)", logger: database.logger)
    }

    /// Sets `migrated_at` unless it is set already.
    func markMigrated(_ uid: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE users SET migrated_at = now(), updated_at = now() WHERE id = \(uid) AND migrated_at IS NULL",
                          logger: database.logger)
    }

    /// The account's password hash (empty when it has none), read without a lock; nil when the account is gone.
    func passwordHash(of uid: String) async throws -> String? {
        try await database.query("SELECT password_hash FROM users WHERE id = \(uid)").first(String.self)
    }

    /// The account's password hash (empty when it has none), its row locked; nil when the account is gone.
    func lockPasswordHash(of uid: String, on c: PostgresConnection) async throws -> String? {
        try await c.query("SELECT password_hash FROM users WHERE id = \(uid) FOR UPDATE", logger: database.logger).first(String.self)
    }

    /// Gives the account an email (its sign-in key) and password; false when another account holds
    /// the email. A new address is unproven until its verification mail is answered.
    func setCredentials(email: String, passwordHash hash: String, of uid: String, on c: PostgresConnection) async throws -> Bool {
        let rows = try await c.query("""
            UPDATE users SET email = \(email), email_key = \(EmailKey.normalize(email)), password_hash = \(hash), updated_at = now(),
                email_verified_at = CASE WHEN lower(email) = lower(\(email)) THEN email_verified_at END
            WHERE id = \(uid) AND NOT EXISTS (SELECT 1 FROM users WHERE email_key = \(EmailKey.normalize(email)) AND id <> \(uid))
            RETURNING id
            """, logger: database.logger)
        return try await rows.first(String.self) != nil
    }

    /// Replaces the account's password hash.
    func setPasswordHash(_ hash: String, of uid: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE users SET password_hash = \(hash), updated_at = now() WHERE id = \(uid)", logger: database.logger)
    }

    /// Marks every unused reset token of the account used.
    func invalidateResetTokens(of uid: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE email_tokens SET used_at = now() WHERE user_id = \(uid) AND purpose = 'reset' AND used_at IS NULL",
                          logger: database.logger)
    }

    /// Marks the email verified if the account's email is still `email`; returns whether it was.
    func markEmailVerified(of uid: String, email: String, on c: PostgresConnection) async throws -> Bool {
        let rows = try await c.query("""
            UPDATE users SET email_verified_at = now(), updated_at = now() WHERE id = \(uid) AND email = \(email) RETURNING id
            """, logger: database.logger)
        return try await rows.first(String.self) != nil
    }

    /// Deletes the account's row, and the gateway's limits kept under its uid or address
    /// (``ThrottleHandlers``: buckets keyed by the uid, `user:<uid>` or the address's
    /// ``EmailKey``; login failures of (address, account)).
    func deleteUser(_ uid: String, on c: PostgresConnection) async throws {
        let key = try await c.query("SELECT email_key FROM users WHERE id = \(uid)", logger: database.logger).first(String?.self) ?? nil
        try await c.query("""
            DELETE FROM throttle_buckets WHERE key = \(uid) OR key = \("user:" + uid) OR key = \(key)
            """, logger: database.logger)
        if let key {
            try await c.query("""
                DELETE FROM throttle_failures WHERE key LIKE 'pair %' AND right(key, length(\(" " + key))) = \(" " + key)
                """, logger: database.logger)
        }
        try await c.query("DELETE FROM users WHERE id = \(uid)", logger: database.logger)
    }
}
