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

    /// Gives an account without an email the identity's `email`, unless another account holds it.
    func adoptIdentityEmail(_ email: String, for uid: String, on c: PostgresConnection) async throws {
        try await c.query("""
            UPDATE users SET email = \(email), email_key = \(email.lowercased()), updated_at = now()
            WHERE id = \(uid) AND email = '' AND NOT EXISTS (SELECT 1 FROM users WHERE email_key = \(email.lowercased()))
            """, logger: database.logger)
    }
}
