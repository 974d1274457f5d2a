import Crypto
import Foundation
import Logging
import Messaging
import NIOPosix
import Persistence
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
        var bytes = [UInt8](repeating: 0, count: 32)
        for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255) }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
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
        case .reset:
            subject = "Reset your Chronir password"
            body = """
                Hello \(name),

                Someone (we hope you) asked to reset the password of your Chronir account.
                Open this link within \(minutes) minutes to choose a new one:

                \(publicURL)/reset-password?token=\(token)

                Or enter this code in the app: \(token)

                Resetting signs you out everywhere. If you did not ask for this, ignore this mail:
                your password stays as it is.
                """
        case .verify:
            subject = "Confirm your email for Chronir"
            body = """
                Hello \(name),

                Open this link within \(minutes / 60) hours to confirm that this address is yours:

                \(publicURL)/verify-email?token=\(token)

                Or enter this code in the app: \(token)
                """
        }
        try await c.query("""
            INSERT INTO mail_outbox (user_id, recipient, subject, body) VALUES (\(uid), \(email), \(subject), \(body))
            """, logger: logger)
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

    /// What a sent mail's body becomes: the link and code it carried are not kept anywhere.
    static let redactedBody = "(sent; the body is not kept: it carried a single-use link)"

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

/// Sends the queued mails through SMTP: claims due rows (a minute's lease, so a crash mid-send
/// retries them), sends each on the thread pool, marks it sent or schedules a retry with
/// back-off (up to 10 attempts, then it stays with its last error for an operator).
struct MailSender: Sendable {
    let database: Database
    let smtp: SMTPClient?
    let pool: NIOThreadPool
    let logger: Logger
    /// When stale bodies were last dropped (at most hourly, from the mail poll).
    let lastSweep = SweepClock()

    /// A time shared by copies of the sender.
    final class SweepClock: Sendable {
        let last = Mutex<ContinuousClock.Instant?>(nil)

        /// Whether an hour passed since the last sweep (the first call: yes); records now if so.
        func due() -> Bool {
            let now = ContinuousClock.now
            return last.withLock { l in
                if let t = l, t.duration(to: now) < .seconds(3600) { return false }
                l = now
                return true
            }
        }
    }

    /// Mails never sent (no SMTP, or given up after 10 attempts) lose their body once the
    /// longest token in them has expired anyway (a day is longer than either lifetime).
    func dropStaleBodies() async throws {
        try await database.query("""
            UPDATE mail_outbox SET body = \(AccountMails.redactedBody)
            WHERE sent_at IS NULL AND created_at < now() - interval '1 day' AND body <> \(AccountMails.redactedBody)
            """).drain()
    }

    func sendDue() async throws {
        if lastSweep.due() { try await dropStaleBodies() }
        let claimed = try await database.query("""
            UPDATE mail_outbox SET next_attempt_at = now() + interval '1 minute', attempts = attempts + 1
            WHERE id IN (SELECT id FROM mail_outbox WHERE sent_at IS NULL AND attempts < 10 AND next_attempt_at <= now()
                         ORDER BY id LIMIT 20 FOR UPDATE SKIP LOCKED)
            RETURNING id, recipient, subject, body, attempts
            """).decode((Int64, String, String, String, Int).self)
        var batch: [(Int64, String, String, String, Int)] = []
        for try await row in claimed { batch.append(row) }
        for (id, recipient, subject, body, attempts) in batch {
            guard let smtp else {
                logger.warning("a mail is waiting but CHRONIR_SMTP_URL is not set", metadata: ["mail": "\(id)"])
                continue
            }
            do {
                try await pool.runIfActive { try smtp.send(to: recipient, subject: subject, body: body, messageID: "mail-\(id)") }
                // The body held a live token: once handed to the mail server it is not kept.
                try await database.query("""
                    UPDATE mail_outbox SET sent_at = now(), last_error = NULL, body = \(AccountMails.redactedBody) WHERE id = \(id)
                    """).drain()
                logger.info("mail sent", metadata: ["mail": "\(id)", "subject": "\(subject)"])
            } catch {
                let wait = min(3600, 5 << min(attempts, 10))
                try await database.query("""
                    UPDATE mail_outbox SET last_error = \("\(error)"), next_attempt_at = now() + make_interval(secs => \(Double(wait)))
                    WHERE id = \(id)
                    """).drain()
                logger.warning("mail not sent; retrying", metadata: ["mail": "\(id)", "attempt": "\(attempts)", "error": "\(error)"])
            }
        }
    }
}
