import Crypto
import Foundation
import Messaging
import Persistence
import PostgresNIO

/// Sessions and refresh tokens: issue, rotation, revocation.
extension AccountsStore {
    static func tokenHash(_ token: String) -> String {
        Hex.lowercase(SHA256.hash(data: Data(token.utf8)))
    }

    static func newRefreshToken() -> String {
        Data.secureRandom(count: 32).base64URLEncodedString()
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

    /// Marks the refresh token rotated (it may not be presented again).
    func markRefreshTokenRotated(_ token: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE refresh_tokens SET rotated_at = now() WHERE token_hash = \(Self.tokenHash(token))",
                          logger: database.logger)
    }

    /// Revokes the account's active sessions as it is deleted; returns their ids.
    func revokeSessionsOnAccountDeletion(of uid: String, on c: PostgresConnection) async throws -> [String] {
        try await c.query("""
            UPDATE sessions SET revoked_at = now(), revoke_reason = 'account deleted' WHERE user_id = \(uid) AND revoked_at IS NULL RETURNING id
            """, logger: database.logger).all(String.self)
    }

    /// Revokes the account's active sessions after a password reset; returns their ids.
    func revokeSessionsOnPasswordReset(of uid: String, on c: PostgresConnection) async throws -> [String] {
        try await c.query("""
            UPDATE sessions SET revoked_at = now(), revoke_reason = 'password reset' WHERE user_id = \(uid) AND revoked_at IS NULL RETURNING id
            """, logger: database.logger).all(String.self)
    }

    /// Deletes every refresh token of the account.
    func deleteRefreshTokens(of uid: String, on c: PostgresConnection) async throws {
        try await c.query("DELETE FROM refresh_tokens WHERE user_id = \(uid)", logger: database.logger)
    }

    /// Unlinks the account's sessions from it (they stay, by id only, for `accounts.revocations`).
    func detachSessions(of uid: String, on c: PostgresConnection) async throws {
        try await c.query("UPDATE sessions SET user_id = '' WHERE user_id = \(uid)", logger: database.logger)
    }

    /// The last sequence number of the `accounts` outbox stream (0 before its first event).
    func outboxHead(on c: PostgresConnection) async throws -> Int64 {
        try await c.query("SELECT last_seq FROM outbox_streams WHERE stream = 'accounts'", logger: database.logger).first(Int64.self) ?? 0
    }

    /// Ids of the sessions revoked within the last `seconds`.
    func sessionsRevoked(withinSeconds seconds: Int, on c: PostgresConnection) async throws -> [String] {
        try await c.query("""
            SELECT id FROM sessions WHERE revoked_at > now() - make_interval(secs => \(seconds))
            """, logger: database.logger).all(String.self)
    }
}
