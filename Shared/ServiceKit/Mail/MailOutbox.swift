import Foundation
import Logging
import NIOCore
import Persistence
import PostgresNIO
import Synchronization

/// Mails queued in a service's own `mail_outbox` table in the transaction that decides them,
/// and sent after it commits by a ``MailSender`` (accounts: password reset and verification;
/// invitations: invitations to addresses without an account).
public enum MailOutbox {
    /// What a sent mail's body becomes: the link it carried is not kept anywhere.
    public static let redactedBody = "(sent; the body is not kept: it carried a single-use link)"

    /// The table, for a service's migrations (`user_id`: the account the mail is about, if any).
    public static let createTable = """
        CREATE TABLE mail_outbox (
            id bigserial PRIMARY KEY,
            user_id text,
            recipient text NOT NULL,
            subject text NOT NULL,
            body text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            attempts integer NOT NULL DEFAULT 0,
            next_attempt_at timestamptz NOT NULL DEFAULT now(),
            sent_at timestamptz,
            last_error text
        )
        """
    public static let createIndex = "CREATE INDEX mail_outbox_pending ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL"

    /// Queues one plain-text mail in the caller's transaction.
    public static func enqueue(to recipient: String, subject: String, body: String, userId: String?,
                               on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("""
            INSERT INTO mail_outbox (user_id, recipient, subject, body) VALUES (\(userId), \(recipient), \(subject), \(body))
            """, logger: logger)
    }
}

/// Sends the queued mails through SMTP: claims due rows (a minute's lease, so a crash mid-send
/// retries them), sends each, marks it sent or schedules a retry with back-off (up to 10
/// attempts, then it stays with its last error for an operator).
///
/// A claimed row's lease (`lease`, a minute) covers its send: each send is bounded as a whole
/// (`sendBound`, 25 s; the SMTP client's own timeouts cover one reply, not a session whose
/// replies each come just in time), and a mail starts only while its send still ends inside
/// the lease — the rest of the batch goes back at once. So a slow relay cannot keep a send
/// open while another replica claims the row again and sends the mail twice (issue 74).
public struct MailSender: Sendable {
    let database: Database
    let smtp: SMTPClient?
    let logger: Logger
    let lease: Duration
    let sendBound: Duration
    /// When stale bodies were last dropped (at most hourly, from the mail poll).
    let lastSweep = SweepClock()

    public init(database: Database, smtp: SMTPClient?, logger: Logger, lease: Duration = .seconds(60), sendBound: Duration = .seconds(25)) {
        self.database = database
        self.smtp = smtp
        self.logger = logger
        self.lease = lease
        self.sendBound = sendBound
    }

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

    /// Mails never sent (no SMTP, or given up after 10 attempts) lose their body after a day:
    /// the links in them have expired by then or should not lie around.
    public func dropStaleBodies() async throws {
        try await database.query("""
            UPDATE mail_outbox SET body = \(MailOutbox.redactedBody)
            WHERE sent_at IS NULL AND created_at < now() - interval '1 day' AND body <> \(MailOutbox.redactedBody)
            """).drain()
    }

    public func sendDue() async throws {
        if lastSweep.due() { try await dropStaleBodies() }
        let claimedAt = ContinuousClock.now
        let leaseSeconds = Double(lease.components.seconds) + Double(lease.components.attoseconds) / 1e18
        let claimed = try await database.query("""
            UPDATE mail_outbox SET next_attempt_at = now() + make_interval(secs => \(leaseSeconds)), attempts = attempts + 1
            WHERE id IN (SELECT id FROM mail_outbox WHERE sent_at IS NULL AND attempts < 10 AND next_attempt_at <= now()
                         ORDER BY id LIMIT 20 FOR UPDATE SKIP LOCKED)
            RETURNING id, recipient, subject, body, attempts
            """).decode((Int64, String, String, String, Int).self)
        var batch: [(Int64, String, String, String, Int)] = []
        for try await row in claimed { batch.append(row) }
        for (index, (id, recipient, subject, body, attempts)) in batch.enumerated() {
            guard let smtp else {
                logger.warning("a mail is waiting but CHRONIR_SMTP_URL is not set", metadata: ["mail": "\(id)"])
                continue
            }
            // Too late in the lease for a whole send: this mail and the rest go back now.
            guard ContinuousClock.now - claimedAt + sendBound < lease else {
                let rest = batch[index...].map(\.0)
                try await database.query("""
                    UPDATE mail_outbox SET next_attempt_at = now(), attempts = greatest(attempts - 1, 0) WHERE id = ANY(\(rest)) AND sent_at IS NULL
                    """).drain()
                logger.notice("mails put back: their lease would end before another send could", metadata: ["mails": "\(rest.count)"])
                break
            }
            do {
                try await withDeadline(sendBound) { [smtp] in
                    try await smtp.send(to: recipient, subject: subject, body: body, messageID: "mail-\(id)-\(UUID().uuidString.prefix(8))")
                }
                // The body held a link: once handed to the mail server it is not kept.
                try await database.query("""
                    UPDATE mail_outbox SET sent_at = now(), last_error = NULL, body = \(MailOutbox.redactedBody) WHERE id = \(id)
                    """).drain()
                logger.info("mail sent", metadata: ["mail": "\(id)", "subject": "\(subject)", "security": "\(smtp.security.rawValue)"])
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

/// The mail settings every sending service reads.
public struct MailSettings: Sendable {
    /// The sender address (`CHRONIR_MAIL_FROM`, default `no-reply@chronir.app`).
    public var from: String
    /// `CHRONIR_SMTP_URL` (or `_FILE`), nil when unset (mails wait in `mail_outbox`).
    public var smtpURL: String?
    /// Extra trusted roots for the relay's certificate (`CHRONIR_SMTP_CA_FILE`, PEM).
    public var caFile: String?
    /// How often queued mails are looked for (`CHRONIR_MAIL_POLL`, default 1 s).
    public var poll: Duration

    public init(environment e: ServiceEnvironment) throws {
        from = e.string("CHRONIR_MAIL_FROM", "no-reply@chronir.app")
        smtpURL = try e.secret("CHRONIR_SMTP_URL")
        caFile = e.optional("CHRONIR_SMTP_CA_FILE")
        poll = try e.duration("CHRONIR_MAIL_POLL", .seconds(1))
        _ = try client(eventLoopGroup: nil)   // a malformed URL stops the start, naming the variable
    }

    /// The SMTP client, nil when no relay is configured. `eventLoopGroup` nil only checks the
    /// settings (such a client cannot send).
    public func client(eventLoopGroup: (any EventLoopGroup)?) throws -> SMTPClient? {
        guard let smtpURL else { return nil }
        do {
            return try SMTPClient(url: smtpURL, from: from, caFile: caFile, eventLoopGroup: eventLoopGroup)
        } catch let e as SMTPClient.Failure {
            throw ServiceEnvironment.Invalid(e.description)
        }
    }
}
