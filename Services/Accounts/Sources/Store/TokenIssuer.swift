import Contracts
import Crypto
import Foundation
import JWTKit
import Logging
import Messaging
import Persistence
import PostgresNIO
import ServiceKit
import Synchronization

/// The claims of an access token.
public struct AccessClaims: JWTPayload, Equatable {
    /// The user id.
    public var sub: SubjectClaim
    /// The session (refresh-token family) the token belongs to.
    public var sid: String
    public var email: String
    /// Whether the account proved `email` (mail answered, or asserted by Apple/Google).
    public var email_verified: Bool?
    public var exp: ExpirationClaim
    public var iat: IssuedAtClaim
    public var iss: IssuerClaim
    public var aud: AudienceClaim

    public func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// Signs access tokens (EdDSA / Ed25519 JWTs). The signing keys live in the accounts schema
/// (``SigningKeyStore``), the first created at first start, their private halves sealed under
/// the key-encryption key when one is configured (``KeySealing``); their public halves are
/// served by `accounts.keys` so the gateway verifies tokens locally with no shared secret.
///
/// A rotation (`accounts.rotate-signing-key`, `chronirctl keys rotate-jwt`) makes a new key
/// the active one at once; the replaced key stays published until the longest token lifetime
/// (and a margin) has passed, then the retire step retires it. Every replica reads which key is
/// active from the database at most ``reload`` after it last looked, so all replicas sign with
/// the new key within that time.
final class TokenIssuer: Sendable {
    static let issuer = "chronir-accounts"
    static let audience = "chronir"

    /// A key tokens are signed with.
    final class Signer: Sendable {
        let kid: String
        /// The public key, base64url (the JWK `x`).
        let publicX: String
        let keys: JWTKeyCollection

        init(kid: String, privateKey: Curve25519.Signing.PrivateKey) async {
            self.kid = kid
            self.publicX = privateKey.publicKey.rawRepresentation.base64URLEncodedString()
            self.keys = JWTKeyCollection()
            await keys.add(eddsa: EdDSA.PrivateKey(backing: privateKey), kid: JWKIdentifier(string: kid))
        }
    }

    let accessTTL: Duration
    /// How long after a rotation the replaced key is still published: the access-token
    /// lifetime and `retireMargin` (clock skew, and replicas still signing with it for up to ``reload``).
    let retireMargin: Duration
    /// How long a replica signs with the key it read before asking the database again.
    let reload: Duration
    private let store: SigningKeyStore
    private let sealing: KeySealing
    private let logger: Logger
    /// The active key as last read, and when it was last checked against the database.
    private let current: Mutex<(signer: Signer, checked: ContinuousClock.Instant)>
    /// The keys last published (answers `accounts.keys` while the database does not).
    private let lastPublished = Mutex<[SigningKeys.Key]>([])

    private init(signer: Signer, accessTTL: Duration, retireMargin: Duration, reload: Duration,
                 store: SigningKeyStore, sealing: KeySealing, logger: Logger) {
        self.current = Mutex((signer: signer, checked: ContinuousClock.now))
        self.accessTTL = accessTTL
        self.retireMargin = retireMargin
        self.reload = reload
        self.store = store
        self.sealing = sealing
        self.logger = logger
    }

    /// The kid of the key new tokens are signed with (as last read).
    var kid: String { current.withLock { $0.signer.kid } }

    /// Prepares the stored keys and loads the active one, creating one when there is none
    /// (replicas starting together agree on one):
    /// - with a key-encryption key, private keys stored in the clear are sealed (and the clear
    ///   column emptied), and keys sealed with `CHRONIR_KEY_ENCRYPTION_KEY_PREVIOUS` are sealed
    ///   again with the current one; a sealed key the configured KEKs do not open stops the start;
    /// - without one, the keys stay unencrypted and a warning says so.
    static func load(database: Database, accessTTL: Duration, sealing: KeySealing, logger: Logger,
                     retireMargin: Duration = .seconds(60), reload: Duration = .seconds(5)) async throws -> TokenIssuer {
        let store = SigningKeyStore(database: database)
        // Every key is opened before anything is written: a wrong key-encryption key changes nothing.
        var opened: [(row: SigningKeyStore.Row, raw: Data, withPrevious: Bool)] = []
        for row in try await store.unretired() {
            if let sealed = row.sealed {
                do {
                    let (raw, withPrevious) = try sealing.open(sealed, kid: row.kid)
                    opened.append((row: row, raw: raw, withPrevious: withPrevious))
                } catch let failure as KeySealing.Failure {
                    throw ServiceEnvironment.Invalid(failure.description)
                }
            } else if let clear = row.clear {
                guard let raw = Data(base64Encoded: clear) else {
                    throw ServiceError(.internalError, "the private key of signing key \(row.kid) is not base64")
                }
                opened.append((row: row, raw: raw, withPrevious: false))
            }
        }
        var sealedNow: [String] = []
        for (row, raw, withPrevious) in opened {
            let key = try Curve25519.Signing.PrivateKey(rawRepresentation: raw)
            let x = key.publicKey.rawRepresentation.base64URLEncodedString()
            if let old = row.sealed, withPrevious {
                let resealed = try sealing.seal(raw, kid: row.kid)
                try await store.reseal(kid: row.kid, old: old, new: resealed)
                logger.notice("signing key sealed again with the current key-encryption key", metadata: ["kid": "\(row.kid)"])
            }
            if row.clear != nil && sealing.encrypts {
                let sealed = try sealing.seal(raw, kid: row.kid)
                if try await store.seal(kid: row.kid, sealed: sealed, publicKey: x) {
                    sealedNow.append(row.kid)
                }
            } else if row.publicKey == nil {
                try await store.setPublicKey(kid: row.kid, publicKey: x)
            }
        }
        if !sealedNow.isEmpty {
            logger.notice("signing keys stored in the clear were encrypted with the key-encryption key",
                          metadata: ["kids": "\(sealedNow.joined(separator: ","))"])
        }
        if !sealing.encrypts {
            logger.warning("""
                \(KeySealing.variable) is not set: the token signing keys are stored unencrypted in \
                accounts.signing_keys (set it, or \(KeySealing.variable)_FILE, to 32 random bytes in base64)
                """)
        }
        let (kid, privateKey, publicKey) = try newKey(sealing: sealing)
        try await store.insertIfNoneActive(kid: kid, privateKey: privateKey, publicKey: publicKey)
        guard let active = try await store.activeKid(), let row = try await store.key(kid: active) else {
            throw ServiceError(.internalError, "no usable signing key in accounts.signing_keys")
        }
        let first = try await Self.makeSigner(row, sealing: sealing)
        return TokenIssuer(signer: first, accessTTL: accessTTL, retireMargin: retireMargin, reload: reload,
                           store: store, sealing: sealing, logger: logger)
    }

    /// A new key: its kid, its private key as stored (sealed when a KEK is configured) and its
    /// public key (base64url).
    private static func newKey(sealing: KeySealing) throws -> (kid: String, privateKey: SigningKeyStore.StoredPrivateKey, publicKey: String) {
        let key = Curve25519.Signing.PrivateKey()
        let kid = "k-\(UUID().uuidString.prefix(8).lowercased())"
        var stored = SigningKeyStore.StoredPrivateKey(clear: nil, sealed: nil)
        if sealing.encrypts {
            stored.sealed = try sealing.seal(key.rawRepresentation, kid: kid)
        } else {
            stored.clear = key.rawRepresentation.base64EncodedString()
        }
        return (kid, stored, key.publicKey.rawRepresentation.base64URLEncodedString())
    }

    /// The signer of a stored key.
    private static func makeSigner(_ row: SigningKeyStore.Row, sealing: KeySealing) async throws -> Signer {
        let raw: Data
        if let sealed = row.sealed {
            do {
                raw = try sealing.open(sealed, kid: row.kid).raw
            } catch let failure as KeySealing.Failure {
                throw ServiceError(.internalError, failure.description)
            }
        } else if let clear = row.clear, let decoded = Data(base64Encoded: clear) {
            raw = decoded
        } else {
            throw ServiceError(.internalError, "signing key \(row.kid) has no usable private key")
        }
        let key = try Curve25519.Signing.PrivateKey(rawRepresentation: raw)
        return await Signer(kid: row.kid, privateKey: key)
    }

    /// The key to sign with: the one last read, unless ``reload`` has passed since it was
    /// checked; then the database says which key is active (one caller asks, the others sign
    /// with the key they have meanwhile). When the database cannot say, the key last read
    /// goes on signing.
    func signer() async -> Signer {
        let now = ContinuousClock.now
        let (cached, due) = current.withLock { state -> (Signer, Bool) in
            guard state.checked.duration(to: now) >= reload else { return (state.signer, false) }
            state.checked = now
            return (state.signer, true)
        }
        guard due else { return cached }
        do {
            guard let active = try await store.activeKid(), active != cached.kid else { return cached }
            guard let row = try await store.key(kid: active) else { return cached }
            let fresh = try await Self.makeSigner(row, sealing: sealing)
            current.withLock { $0 = (signer: fresh, checked: now) }
            logger.notice("signing tokens with a new key", metadata: ["kid": "\(active)", "previous": "\(cached.kid)"])
            return fresh
        } catch {
            logger.warning("cannot read the active signing key; signing with the one last read",
                           metadata: ["kid": "\(cached.kid)", "error": "\(error)"])
            return cached
        }
    }

    /// A signed access token for `user` in `session`.
    func accessToken(userID: String, email: String, emailVerified: Bool = false, session: String, now: Date = Date()) async throws -> String {
        let claims = AccessClaims(
            sub: .init(value: userID), sid: session, email: email, email_verified: emailVerified,
            exp: .init(value: now.addingTimeInterval(Double(accessTTL.components.seconds))),
            iat: .init(value: now), iss: .init(value: Self.issuer), aud: .init(value: [Self.audience])
        )
        let key = await signer()
        return try await key.keys.sign(claims, kid: JWKIdentifier(string: key.kid))
    }

    /// The public keys that verify tokens (`accounts.keys`): the active key and those replaced
    /// whose retirement time has not come. When the database does not answer, the keys last
    /// published (before any, the key this replica signs with).
    func publishedKeys() async -> SigningKeys {
        let keys: [SigningKeys.Key]
        do {
            let published = try await store.published().map { SigningKeys.Key(kid: $0.kid, x: $0.x) }
            lastPublished.withLock { $0 = published }
            keys = published
        } catch {
            logger.warning("cannot read the signing keys; publishing the ones last read", metadata: ["error": "\(error)"])
            let last = lastPublished.withLock { $0 }
            let own = current.withLock { $0.signer }
            keys = last.isEmpty ? [SigningKeys.Key(kid: own.kid, x: own.publicX)] : last
        }
        return SigningKeys(keys: keys, issuer: Self.issuer, audience: Self.audience)
    }

    /// Rotation: a new key, signing at once (on this replica; the others within ``reload``);
    /// the replaced key is published until the longest token lifetime and the margin pass.
    func rotate() async throws -> AccountsMethods.RotateSigningKey.Response {
        let (kid, privateKey, publicKey) = try Self.newKey(sealing: sealing)
        let replaced = try await store.rotate(to: kid, privateKey: privateKey, publicKey: publicKey, retireIn: accessTTL + retireMargin)
        guard let row = try await store.key(kid: kid) else {
            throw ServiceError(.internalError, "the new signing key \(kid) is not stored")
        }
        let fresh = try await Self.makeSigner(row, sealing: sealing)
        current.withLock { $0 = (signer: fresh, checked: ContinuousClock.now) }
        let previous = replaced?.previous ?? "none"
        let retiresAt = replaced.map { ISO8601DateFormatter().string(from: $0.retireAfter) } ?? "-"
        logger.notice("token signing key rotated", metadata: ["kid": "\(kid)", "previous": "\(previous)", "previousRetiresAt": "\(retiresAt)"])
        return .init(kid: kid, previousKid: replaced?.previous, previousRetiresAt: replaced?.retireAfter)
    }

    /// The retire step (every `CHRONIR_SIGNING_KEY_SWEEP`): keys past their retirement time
    /// are retired and their private keys erased; they are no longer published, and the
    /// gateway stops trusting them after its grace (`CHRONIR_RETIRED_KEY_GRACE`).
    func retireDue() async throws {
        for kid in try await store.retireDue() {
            logger.notice("token signing key retired: no longer published", metadata: ["kid": "\(kid)"])
        }
    }
}
