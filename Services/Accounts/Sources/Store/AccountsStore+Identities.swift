import Contracts
import Persistence
import PostgresNIO

/// Apple and Google identities linked to accounts.
extension AccountsStore {
    /// The account the identity (`iss`, `sub`) is linked to.
    func identityOwner(issuer: String, subject: String, on c: PostgresConnection) async throws -> String? {
        try await c.query("""
            SELECT user_id FROM identities WHERE issuer = \(issuer) AND subject = \(subject)
            """, logger: database.logger).first(String.self)
    }

    /// Links the identity to the account.
    func insertIdentity(_ identity: ProviderIdentity, for uid: String, on c: PostgresConnection) async throws {
        try await c.query("""
            INSERT INTO identities (issuer, subject, user_id, email) VALUES (\(identity.issuer), \(identity.subject), \(uid), \(identity.email))
            """, logger: database.logger)
    }

    /// Gives an account without an email the identity's `email` (proven: the provider asserted
    /// it), unless another account holds it.
    func adoptIdentityEmail(_ email: String, for uid: String, on c: PostgresConnection) async throws {
        try await c.query("""
            UPDATE users SET email = \(email), email_key = \(EmailKey.normalize(email)), email_verified_at = now(), updated_at = now()
            WHERE id = \(uid) AND email = '' AND NOT EXISTS (SELECT 1 FROM users WHERE email_key = \(EmailKey.normalize(email)))
            """, logger: database.logger)
    }
}

extension AccountsStore {
    /// Unlinks every Apple/Google identity of the account; returns how many there were.
    func deleteIdentities(of uid: String, on c: PostgresConnection) async throws -> Int {
        var n = 0
        for try await _ in try await c.query("DELETE FROM identities WHERE user_id = \(uid) RETURNING 1", logger: database.logger)
            .decode(Int.self) { n += 1 }
        return n
    }
}
