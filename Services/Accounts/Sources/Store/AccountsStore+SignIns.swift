import Contracts
import Foundation
import Persistence
import PostgresNIO

/// What the account's settings list and end: its identities and its sessions.
extension AccountsStore {
    /// The account's linked identities (issuer, email, linked at), oldest first.
    func identities(of uid: String, on c: PostgresConnection) async throws -> [(issuer: String, email: String?, linkedAt: Date)] {
        var out: [(String, String?, Date)] = []
        for try await r in try await c.query("""
            SELECT issuer, email, created_at FROM identities WHERE user_id = \(uid) ORDER BY created_at, issuer, subject
            """, logger: database.logger).decode((String, String?, Date).self) {
            out.append(r)
        }
        return out
    }

    /// Unlinks the account's identities whose issuer is one of `issuers`; returns how many.
    func deleteIdentities(of uid: String, issuers: [String], on c: PostgresConnection) async throws -> Int {
        var n = 0
        for try await _ in try await c.query("""
            DELETE FROM identities WHERE user_id = \(uid) AND issuer = ANY(\(issuers)) RETURNING 1
            """, logger: database.logger).decode(Int.self) { n += 1 }
        return n
    }

    /// Locks the account's row (so two unlinks cannot each see the other's identity as the
    /// remaining way in) and answers whether it has a password.
    func lockHasPassword(_ uid: String, on c: PostgresConnection) async throws -> Bool? {
        try await c.query("SELECT password_hash <> '' FROM users WHERE id = \(uid) FOR UPDATE", logger: database.logger).first(Bool.self)
    }

    /// The account's active sessions, newest first, with when each last renewed its tokens (its newest refresh token;
    /// the sign-in itself when it never renewed). A session whose refresh tokens all expired is
    /// not listed: it can no longer do anything.
    func activeSessions(of uid: String, on c: PostgresConnection) async throws -> [(id: String, createdAt: Date, lastActiveAt: Date?)] {
        var out: [(String, Date, Date?)] = []
        for try await r in try await c.query("""
            SELECT s.id, s.created_at, (SELECT max(t.created_at) FROM refresh_tokens t WHERE t.session_id = s.id)
            FROM sessions s WHERE s.user_id = \(uid) AND s.revoked_at IS NULL
              AND EXISTS (SELECT 1 FROM refresh_tokens t WHERE t.session_id = s.id AND t.rotated_at IS NULL AND t.expires_at > now())
            ORDER BY s.created_at DESC, s.id DESC LIMIT 200
            """, logger: database.logger).decode((String, Date, Date?).self) {
            out.append(r)
        }
        return out
    }

    /// Revokes one of the account's sessions; returns whether it was the account's and active.
    func revokeSession(_ session: String, of uid: String, reason: String, on c: PostgresConnection) async throws -> Bool {
        try await c.query("""
            UPDATE sessions SET revoked_at = now(), revoke_reason = \(reason)
            WHERE id = \(session) AND user_id = \(uid) AND revoked_at IS NULL RETURNING id
            """, logger: database.logger).first(String.self) != nil
    }

    /// Revokes every active session of the account; returns their ids.
    func revokeSessions(of uid: String, reason: String, on c: PostgresConnection) async throws -> [String] {
        try await c.query("""
            UPDATE sessions SET revoked_at = now(), revoke_reason = \(reason) WHERE user_id = \(uid) AND revoked_at IS NULL RETURNING id
            """, logger: database.logger).all(String.self)
    }
}
