import Foundation
import Persistence
import PostgresNIO

/// The access-token signing keys in the accounts schema (`signing_keys`).
///
/// A key is, in turn:
/// - **active** (`retire_after` and `retired_at` null): new tokens are signed with it; at most
///   one (the unique index `signing_keys_one_active`);
/// - **retiring** (`retire_after` set, in the future): replaced by a rotation, it still verifies
///   the tokens it signed, so it is still published (`accounts.keys`);
/// - **retired** (`retired_at` set, by ``retireDue()`` once `retire_after` passed): no longer
///   published; its private key is erased (the public one stays, for the record).
///
/// The private key is stored sealed (`private_key_sealed`, see ``KeySealing``) when a
/// key-encryption key is configured, else as it is (`private_key`, base64 of the raw Ed25519
/// key); `public_key` is the raw public key, base64url (the JWK `x`).
struct SigningKeyStore: Sendable {
    let database: Database

    /// A stored key that is not retired.
    struct Row: Sendable {
        var kid: String
        /// The raw private key, base64, when stored unencrypted.
        var clear: String?
        /// The sealed private key (``KeySealing``).
        var sealed: String?
        var publicKey: String?
        /// Set once the key was replaced: published until then.
        var retireAfter: Date?
        var createdAt: Date
    }

    /// The private key of a new key as it is stored: in the clear or sealed.
    struct StoredPrivateKey: Sendable {
        var clear: String?
        var sealed: String?
    }

    /// Serializes rotations and the first key's creation across replicas.
    static let lockKey = "chronir.accounts.signing-keys"

    /// Every key not retired, oldest first.
    func unretired() async throws -> [Row] {
        let rows = try await database.query("""
            SELECT kid, private_key, private_key_sealed, public_key, retire_after, created_at
            FROM signing_keys WHERE retired_at IS NULL ORDER BY created_at, kid
            """)
        var out: [Row] = []
        for try await (kid, clear, sealed, publicKey, retireAfter, createdAt) in rows.decode((String, String?, String?, String?, Date?, Date).self) {
            out.append(Row(kid: kid, clear: clear, sealed: sealed, publicKey: publicKey, retireAfter: retireAfter, createdAt: createdAt))
        }
        return out
    }

    /// Replaces the clear private key of `kid` by its sealed form (and records its public key
    /// when missing); false when another replica did it first.
    @discardableResult
    func seal(kid: String, sealed: String, publicKey: String) async throws -> Bool {
        try await database.query("""
            UPDATE signing_keys SET private_key_sealed = \(sealed), private_key = NULL, public_key = coalesce(public_key, \(publicKey))
            WHERE kid = \(kid) AND private_key IS NOT NULL
            RETURNING kid
            """).drain() > 0
    }

    /// Replaces the sealed private key `old` of `kid` by `new` (sealed with another KEK).
    func reseal(kid: String, old: String, new: String) async throws {
        try await database.query("""
            UPDATE signing_keys SET private_key_sealed = \(new) WHERE kid = \(kid) AND private_key_sealed = \(old)
            """).drain()
    }

    /// Records the public key of `kid` (keys made before the column existed).
    func setPublicKey(kid: String, publicKey: String) async throws {
        try await database.query("UPDATE signing_keys SET public_key = \(publicKey) WHERE kid = \(kid) AND public_key IS NULL").drain()
    }

    /// Inserts the key `kid` unless one is active, in one transaction under the signing-keys
    /// lock (so replicas starting together agree on one).
    func insertIfNoneActive(kid: String, privateKey: StoredPrivateKey, publicKey: String) async throws {
        try await database.transaction { c in
            try await c.lockUntilCommit(Self.lockKey, logger: database.logger)
            try await c.query("""
                INSERT INTO signing_keys (kid, private_key, private_key_sealed, public_key)
                SELECT \(kid), \(privateKey.clear), \(privateKey.sealed), \(publicKey)
                WHERE NOT EXISTS (SELECT 1 FROM signing_keys WHERE retired_at IS NULL AND retire_after IS NULL)
                ON CONFLICT DO NOTHING
                """, logger: database.logger).drain()
        }
    }

    /// The kid of the active key, nil when there is none.
    func activeKid() async throws -> String? {
        try await database.query("""
            SELECT kid FROM signing_keys WHERE retired_at IS NULL AND retire_after IS NULL ORDER BY created_at LIMIT 1
            """).first(String.self)
    }

    /// The key `kid` unless it is retired.
    func key(kid: String) async throws -> Row? {
        let rows = try await database.query("""
            SELECT kid, private_key, private_key_sealed, public_key, retire_after, created_at
            FROM signing_keys WHERE kid = \(kid) AND retired_at IS NULL
            """)
        for try await (kid, clear, sealed, publicKey, retireAfter, createdAt) in rows.decode((String, String?, String?, String?, Date?, Date).self) {
            return Row(kid: kid, clear: clear, sealed: sealed, publicKey: publicKey, retireAfter: retireAfter, createdAt: createdAt)
        }
        return nil
    }

    /// The keys that verify tokens (`accounts.keys`): the active one and those retiring whose
    /// `retire_after` has not passed, with their public keys (kid, base64url x), oldest first.
    func published() async throws -> [(kid: String, x: String)] {
        let rows = try await database.query("""
            SELECT kid, public_key FROM signing_keys
            WHERE retired_at IS NULL AND public_key IS NOT NULL AND (retire_after IS NULL OR retire_after > now())
            ORDER BY created_at, kid
            """)
        var out: [(kid: String, x: String)] = []
        for try await (kid, x) in rows.decode((String, String).self) { out.append((kid: kid, x: x)) }
        return out
    }

    /// Rotation: in one transaction under the signing-keys lock, marks the active key retiring
    /// (`retire_after` = now + `retireIn`) and inserts `kid` as the active key. Returns the key
    /// replaced and when it retires (nil when there was no active key).
    func rotate(to kid: String, privateKey: StoredPrivateKey, publicKey: String,
                retireIn: Duration) async throws -> (previous: String, retireAfter: Date)? {
        let seconds = Double(retireIn.components.seconds) + Double(retireIn.components.attoseconds) / 1e18
        return try await database.transaction { c in
            try await c.lockUntilCommit(Self.lockKey, logger: database.logger)
            // The lock serializes rotations; the row lock keeps anything else from changing the
            // active key meanwhile, and the unique index refuses a second active key regardless.
            let active = try await c.query("""
                SELECT kid FROM signing_keys WHERE retired_at IS NULL AND retire_after IS NULL FOR UPDATE
                """, logger: database.logger).all(String.self)
            var replaced: (previous: String, retireAfter: Date)? = nil
            if !active.isEmpty {
                let rows = try await c.query("""
                    UPDATE signing_keys SET retire_after = now() + make_interval(secs => \(seconds))
                    WHERE retired_at IS NULL AND retire_after IS NULL
                    RETURNING kid, retire_after
                    """, logger: database.logger)
                for try await (previous, retireAfter) in rows.decode((String, Date).self) {
                    replaced = (previous: previous, retireAfter: retireAfter)
                }
            }
            try await c.query("""
                INSERT INTO signing_keys (kid, private_key, private_key_sealed, public_key)
                VALUES (\(kid), \(privateKey.clear), \(privateKey.sealed), \(publicKey))
                """, logger: database.logger).drain()
            return replaced
        }
    }

    /// Retires the keys whose `retire_after` has passed, and erases the private key of every
    /// retired key (a retired key signs nothing more). Returns the kids retired now.
    func retireDue() async throws -> [String] {
        let retired = try await database.query("""
            UPDATE signing_keys SET retired_at = now(), private_key = NULL, private_key_sealed = NULL
            WHERE retired_at IS NULL AND retire_after IS NOT NULL AND retire_after <= now()
            RETURNING kid
            """).all(String.self)
        // Keys retired before this release (or by hand) may still hold their private key.
        try await database.query("""
            UPDATE signing_keys SET private_key = NULL, private_key_sealed = NULL
            WHERE retired_at IS NOT NULL AND (private_key IS NOT NULL OR private_key_sealed IS NOT NULL)
            """).drain()
        return retired.sorted()
    }
}
