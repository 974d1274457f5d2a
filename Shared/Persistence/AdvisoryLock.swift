import Logging
import PostgresNIO

extension PostgresConnection {
    /// Takes the advisory lock named `key` for the rest of the transaction
    /// (`pg_advisory_xact_lock(hashtextextended(key, 0))`): writers that must not interleave (one
    /// owner's alarms, one inviter's uploads, a schema's migrations) each take it first, and it
    /// is released by the commit or the rollback, never by hand. The suite's one spelling of it:
    /// the name is the lock's identity, so two spellings of one name would not exclude each other.
    /// (Two older locks hash with the 32-bit `hashtext` — an inviter's invitations, a user's paid
    /// snoozes — and keep it: a replica of the previous release must still exclude a new one.)
    public func lockUntilCommit(_ key: String, logger: Logger) async throws {
        _ = try await query("SELECT pg_advisory_xact_lock(hashtextextended(\(key), 0))", logger: logger).drain()
    }
}
