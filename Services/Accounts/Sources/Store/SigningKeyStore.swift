import Foundation
import Persistence
import PostgresNIO

/// The access-token signing keys in the accounts schema (`signing_keys`); the key in use is the
/// oldest one not retired.
struct SigningKeyStore: Sendable {
    let database: Database

    /// Inserts the key `kid` (`privateKey`: its raw Ed25519 private key, base64) unless a key
    /// that is not retired already exists, in one statement (so concurrent starts agree on one).
    func insertIfNoneActive(kid: String, privateKey: String) async throws {
        try await database.query("""
            INSERT INTO signing_keys (kid, private_key)
            SELECT \(kid), \(privateKey) WHERE NOT EXISTS (SELECT 1 FROM signing_keys WHERE retired_at IS NULL)
            """)
    }

    /// The key in use: the oldest one not retired, with its private key as stored (base64);
    /// nil when there is none.
    func activeKey() async throws -> (kid: String, privateKey: String)? {
        let rows = try await database.query("SELECT kid, private_key FROM signing_keys WHERE retired_at IS NULL ORDER BY created_at LIMIT 1")
        for try await (kid, secret) in rows.decode((String, String).self) {
            return (kid, secret)
        }
        return nil
    }
}
