import Crypto
import Foundation
import Logging
import Messaging
import NIOPosix
import Persistence
import ServiceKit
import PostgresNIO
import Synchronization

/// Password-reset and email-verification mails: single-use tokens (256 bits, kept only as their
/// SHA-256, expiring) and the mails carrying them, queued in `mail_outbox` in the transaction
/// that decides to send them.
struct AccountMails: Sendable {
    /// Where the links in the mails point (`CHRONIR_PUBLIC_URL`).
    let publicURL: String
    let resetTTL: Duration
    let verifyTTL: Duration

    enum Purpose: String {
        case reset, verify
    }

    static func newToken() -> String {
        Data.secureRandom(count: 32).base64URLEncodedString()
    }

    static func hash(_ token: String) -> String {
        Hex.lowercase(SHA256.hash(data: Data(token.utf8)))
    }

    /// Makes a token for `uid` and queues the mail that carries it to `email`.
    func send(_ purpose: Purpose, uid: String, email: String, name: String, on c: PostgresConnection, logger: Logger) async throws {
        let token = Self.newToken()
        let ttl = purpose == .reset ? resetTTL : verifyTTL
        try await c.query("""
            INSERT INTO email_tokens (token_hash, user_id, purpose, email, expires_at)
            VALUES (\(Self.hash(token)), \(uid), \(purpose.rawValue), \(email), now() + make_interval(secs => \(Double(ttl.components.seconds))))
            """, logger: logger)
        let minutes = Int(ttl.components.seconds / 60)
        let (subject, body): (String, String)
        switch purpose {
        // The token rides in the link's fragment (after `#`), which browsers never send: it
        // reaches no server's access log, proxy or Referer (`/reset-password?token=` and
        // `/verify-email?token=`, the links of older mails, still redirect).
        case .reset:
            subject = "Reset your Chronir password"
            body = """
                Hello \(name),

                Someone (we hope you) asked to reset the password of your Chronir account.
                Open this link within \(minutes) minutes to choose a new one:

                \(publicURL)/app/#/reset/\(token)

                Or enter this code in the app: \(token)

                Resetting signs you out everywhere. If you did not ask for this, ignore this mail:
                your password stays as it is.
                """
        case .verify:
            subject = "Confirm your email for Chronir"
            body = """
                Hello \(name),

                A Chronir account was made with this address, or asked to confirm it. If it is
                yours, sign in to it and open this link within \(minutes / 60) hours to confirm
                that this address is yours:

                \(publicURL)/app/#/verify/\(token)

                Or enter this code in the app while signed in: \(token)

                If you did not make a Chronir account, someone else typed your address: ignore
                this mail, and nothing is confirmed. To take the account from them and remove
                everything made in it, ask for a password reset with this address:

                \(publicURL)/app/#/forgot
                """
        }
        try await MailOutbox.enqueue(to: email, subject: subject, body: body, userId: uid, on: c, logger: logger)
    }

    /// Whether `token` is an unused, unexpired token of `purpose` (read only: one hash, one
    /// indexed lookup — checked before anything expensive such as hashing a password).
    static func isLive(_ token: String, _ purpose: Purpose, database: Database) async throws -> Bool {
        guard !token.isEmpty, token.utf8.count <= 256 else { return false }
        return try await database.query("""
            SELECT 1 FROM email_tokens
            WHERE token_hash = \(hash(token)) AND purpose = \(purpose.rawValue) AND used_at IS NULL AND expires_at > now()
            """).first(Int.self) != nil
    }

    /// Consumes a token of `purpose`: its user and the email it was sent to, or nil when it is
    /// unknown, used or expired. Locks the row, so a token is used once.
    static func consume(_ token: String, _ purpose: Purpose, on c: PostgresConnection, logger: Logger) async throws -> (uid: String, email: String)? {
        let rows = try await c.query("""
            UPDATE email_tokens SET used_at = now()
            WHERE token_hash = \(hash(token)) AND purpose = \(purpose.rawValue) AND used_at IS NULL AND expires_at > now()
            RETURNING user_id, email
            """, logger: logger)
        for try await (uid, email) in rows.decode((String, String).self) { return (uid, email) }
        return nil
    }
}
