import Crypto
import Foundation
import ServiceKit

/// The accounts service's settings (environment, with defaults), read and validated before
/// anything connects: a malformed value, a key-encryption key file that cannot be read or an
/// SMTP URL of the wrong form stops the start with a message naming the variable.
///
/// The settings every service reads (logging, bus, database, RPC, outbox, operations endpoint,
/// shutdown grace) stay in ``ServiceRuntime`` and ``ServiceHost``.
public struct AccountsConfig: ServiceConfig {
    // MARK: Password hashing

    /// Threads that hash passwords (`CHRONIR_HASH_THREADS`, default 2, 1…64); the mail sender
    /// runs its blocking SMTP I/O on them too.
    public var hashThreads: Int
    /// The most password hashes queued or running at once (`CHRONIR_HASH_QUEUE`, default 64,
    /// 1…100 000); one more is answered 503 `CA022` with `Retry-After` at once.
    public var hashQueue: Int
    /// The scrypt cost of new password hashes, log2 N (`CHRONIR_SCRYPT_LOG_N`, default 15, 4…20).
    public var scryptLogN: Int

    // MARK: Sessions and tokens

    /// Access-token lifetime (`CHRONIR_ACCESS_TTL`, default 1 h).
    public var accessTTL: Duration
    /// Refresh-token lifetime (`CHRONIR_REFRESH_TTL`, default 30 d).
    public var refreshTTL: Duration
    /// How long after a rotation, beyond the access-token lifetime, the replaced signing key is
    /// still published (`CHRONIR_SIGNING_KEY_RETIRE_MARGIN`, default 60 s).
    public var signingKeyRetireMargin: Duration
    /// How long a replica signs with the key it read before asking the database which key is
    /// active (`CHRONIR_SIGNING_KEY_RELOAD`, default 5 s).
    public var signingKeyReload: Duration
    /// How often keys past their retirement time are retired (`CHRONIR_SIGNING_KEY_SWEEP`, default 60 s).
    public var signingKeySweep: Duration
    /// The key-encryption keys of the token-signing keys: `CHRONIR_KEY_ENCRYPTION_KEY` (or
    /// `CHRONIR_KEY_ENCRYPTION_KEY_FILE`, a file holding it) and, while it is changed,
    /// `CHRONIR_KEY_ENCRYPTION_KEY_PREVIOUS` (or `_PREVIOUS_FILE`); each 32 bytes in base64.
    /// Default: none (signing keys stored unencrypted, with a warning at start). See ``KeySealing``.
    var keySealing: KeySealing

    // MARK: Mails

    /// Where the links in the account mails point (`CHRONIR_PUBLIC_URL`, default `http://localhost:8080`).
    public var publicURL: String
    /// Password-reset token lifetime (`CHRONIR_RESET_TOKEN_TTL`, default 1 h).
    public var resetTokenTTL: Duration
    /// Email-verification token lifetime (`CHRONIR_VERIFY_TOKEN_TTL`, default 48 h).
    public var verifyTokenTTL: Duration
    /// The sender, the relay (`CHRONIR_SMTP_URL`, TLS by STARTTLS or `smtps://`; unset: the
    /// mails wait in `mail_outbox`, with a warning at start) and the poll (``MailSettings``).
    public var mail: MailSettings

    // MARK: Webhooks

    /// Accept webhook URLs that point inside: loopback, private and other internal addresses
    /// (`CHRONIR_WEBHOOK_ALLOW_PRIVATE`, default false; tests, local runs).
    public var allowPrivateWebhooks: Bool

    // MARK: Sign in with Apple and Google

    /// Apple's JWKS (`CHRONIR_APPLE_JWKS_URL`, default `https://appleid.apple.com/auth/keys`).
    public var appleJWKSURL: String
    /// Google's JWKS (`CHRONIR_GOOGLE_JWKS_URL`, default `https://www.googleapis.com/oauth2/v3/certs`).
    public var googleJWKSURL: String
    /// The app's bundle or service ids Apple ID tokens must be for (`CHRONIR_APPLE_AUDIENCES`,
    /// comma-separated, default none: Sign in with Apple is answered 404 CA017, not enabled).
    public var appleAudiences: [String]
    /// The OAuth client ids Google ID tokens must be for (`CHRONIR_GOOGLE_AUDIENCES`,
    /// comma-separated, default none: Sign in with Google is answered 404 CA017, not enabled).
    public var googleAudiences: [String]
    /// Clock skew allowed on an ID token's `exp` and `iat` (`CHRONIR_IDENTITY_TOKEN_SKEW`, default 60 s).
    public var identityTokenSkew: Duration

    public init(environment e: ServiceEnvironment) throws {
        hashThreads = try e.int("CHRONIR_HASH_THREADS", 2, in: 1...64)
        hashQueue = try e.int("CHRONIR_HASH_QUEUE", 64, in: 1...100_000)
        scryptLogN = try e.int("CHRONIR_SCRYPT_LOG_N", 15, in: 4...20)

        accessTTL = try e.duration("CHRONIR_ACCESS_TTL", .seconds(3600))
        refreshTTL = try e.duration("CHRONIR_REFRESH_TTL", .seconds(30 * 86_400))
        signingKeyRetireMargin = try e.duration("CHRONIR_SIGNING_KEY_RETIRE_MARGIN", .seconds(60))
        signingKeyReload = try e.duration("CHRONIR_SIGNING_KEY_RELOAD", .seconds(5))
        signingKeySweep = try e.duration("CHRONIR_SIGNING_KEY_SWEEP", .seconds(60))
        keySealing = try Self.sealing(from: e)

        publicURL = e.string("CHRONIR_PUBLIC_URL", "http://localhost:8080")
        resetTokenTTL = try e.duration("CHRONIR_RESET_TOKEN_TTL", .seconds(3600))
        verifyTokenTTL = try e.duration("CHRONIR_VERIFY_TOKEN_TTL", .seconds(48 * 3600))
        mail = try MailSettings(environment: e)

        allowPrivateWebhooks = try e.bool("CHRONIR_WEBHOOK_ALLOW_PRIVATE", false)

        appleJWKSURL = e.string("CHRONIR_APPLE_JWKS_URL", "https://appleid.apple.com/auth/keys")
        googleJWKSURL = e.string("CHRONIR_GOOGLE_JWKS_URL", "https://www.googleapis.com/oauth2/v3/certs")
        appleAudiences = e.list("CHRONIR_APPLE_AUDIENCES", [])
        googleAudiences = e.list("CHRONIR_GOOGLE_AUDIENCES", [])
        identityTokenSkew = try e.duration("CHRONIR_IDENTITY_TOKEN_SKEW", .seconds(60))
    }

    // MARK: Key-encryption keys

    /// The KEKs of `e`; a variable that is set but malformed (or set both directly and as a
    /// file, or as a file that cannot be read) is a configuration error naming it.
    private static func sealing(from e: ServiceEnvironment) throws -> KeySealing {
        let current = try kek(e, KeySealing.variable)
        let previous = try kek(e, KeySealing.previousVariable)
        if previous != nil && current == nil {
            throw ServiceEnvironment.Invalid(
                "\(KeySealing.previousVariable) is set without \(KeySealing.variable): set the new key in \(KeySealing.variable)")
        }
        return KeySealing(current: current, previous: previous)
    }

    /// A KEK: 32 bytes, base64.
    private static func kek(_ e: ServiceEnvironment, _ name: String) throws -> SymmetricKey? {
        guard let text = try kekText(e, name) else { return nil }
        guard let bytes = Data(base64Encoded: text), bytes.count == 32 else {
            throw ServiceEnvironment.Invalid("\(name) must be 32 random bytes in base64 (44 characters; `openssl rand -base64 32`)")
        }
        return SymmetricKey(data: bytes)
    }

    /// The value of `name`, or the content of the file `name_FILE` names, trimmed of white space
    /// at both ends; nil when neither is set. (Not ``ServiceEnvironment/secret(_:)``: a KEK's
    /// value is trimmed too, and an empty file is reported as a malformed key, as before.)
    private static func kekText(_ e: ServiceEnvironment, _ name: String) throws -> String? {
        let direct = e.optional(name)
        let file = e.optional("\(name)_FILE")
        switch (direct, file) {
        case (nil, nil):
            return nil
        case (.some, .some):
            throw ServiceEnvironment.Invalid("set \(name) or \(name)_FILE, not both")
        case (.some(let value), nil):
            return value.trimmingCharacters(in: .whitespacesAndNewlines)
        case (nil, .some(let path)):
            let text: String
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw ServiceEnvironment.Invalid("\(name)_FILE=\"\(path)\" cannot be read: \(error.localizedDescription)")
            }
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}
