import Contracts
import Foundation
import InvitationsCore
import Logging
import Messaging
import Outbox
import Persistence
import PostgresNIO

/// Invitations in the invitations schema, and their events.
struct InvitationStore: Sendable {
    let database: Database
    let outbox: OutboxWriter
    var logger: Logger { database.logger }

    static let columns = """
        code, type, reference_id, reference_name, inviter_id, inviter_display_name, invitee_email, status, created_at, expires_at, \
        accepted_at, accepted_by, invitee_uid
        """

    static func link(_ code: String) -> String { "https://chronir.app/invite/\(code)" }

    static func decode(_ rows: PostgresRowSequence) async throws -> [Invitation] {
        var out: [Invitation] = []
        for try await r in rows.decode((String, String, String, String, String, String, String?, String, Date, Date, Date?, String?, String?).self) {
            out.append(Invitation(id: r.0, type: r.1, referenceId: r.2, referenceName: r.3, inviterId: r.4, inviterDisplayName: r.5,
                                  inviteeEmail: r.6, inviteeUserId: r.12, status: r.7, createdAt: r.8, expiresAt: r.9, acceptedAt: r.10, acceptedBy: r.11,
                                  deepLink: link(r.0)))
        }
        return out
    }

    func lock(_ code: String, on c: PostgresConnection) async throws -> Invitation? {
        try await Self.decode(c.query("SELECT \(unescaped: Self.columns) FROM invitations WHERE code = \(code) FOR UPDATE", logger: logger)).first
    }

    /// The claim on invitation `code` (``AcceptClaim``), read under its lock; nil when none.
    func claim(_ code: String, on c: PostgresConnection) async throws -> AcceptClaim? {
        let rows = try await c.query("SELECT claimed_by, claimed_until FROM invitations WHERE code = \(code)", logger: logger)
        for try await (by, until) in rows.decode((String?, Date?).self) {
            guard let by, let until else { return nil }
            return AcceptClaim(by: by, until: until)
        }
        return nil
    }

    /// Writes `claim` on invitation `code`; with `claim` nil, clears only the claim `clearing`
    /// (the one a request wrote itself: another request's, even the same user's, stays).
    func setClaim(_ code: String, _ claim: AcceptClaim?, clearing: AcceptClaim? = nil, on c: PostgresConnection) async throws {
        try await c.query("""
            UPDATE invitations SET claimed_by = \(claim?.by), claimed_until = \(claim?.until)
            WHERE code = \(code) AND (\(clearing?.by)::text IS NULL OR (claimed_by = \(clearing?.by) AND claimed_until = \(clearing?.until)))
            """, logger: logger)
    }

    /// Writes `transition` (the status, and the acceptance for an accepted one) and publishes
    /// the event that announces it. `userName`: the answering user's name, for the event.
    func finish(_ i: Invitation, _ transition: InvitationTransition, userName: String?, on c: PostgresConnection) async throws -> Invitation {
        let status = transition.to.rawValue, user = transition.user, reason = transition.reason?.rawValue, event = transition.event
        let rows = try await Self.decode(c.query("""
            UPDATE invitations SET status = \(status), finished_at = now(), claimed_by = NULL, claimed_until = NULL,
                accepted_at = CASE WHEN \(status) = 'accepted' THEN now() ELSE accepted_at END,
                accepted_by = CASE WHEN \(status) = 'accepted' THEN \(user) ELSE accepted_by END
            WHERE code = \(i.id) RETURNING \(unescaped: Self.columns)
            """, logger: logger))
        guard let n = rows.first else { throw ServiceError(.notFound, "no invitation \(i.id)") }
        _ = try await outbox.append(event, InvitationsEvents.Changed(invitation: n, userId: user, userDisplayName: userName, reason: reason),
                                    actor: user, on: c)
        return n
    }

    /// Revokes every pending invitation matching `condition` (a deleted alarm or group, a deleted inviter).
    func revokePending(reference: String? = nil, inviter: String? = nil, inviteeEmail: String? = nil, inviteeUserId: String? = nil,
                       madeBefore: Date? = nil, reason: RevokeReason, on c: PostgresConnection) async throws {
        let rows = try await Self.decode(c.query("""
            SELECT \(unescaped: Self.columns) FROM invitations
            WHERE status = 'pending' AND (reference_id = \(reference) OR inviter_id = \(inviter) OR lower(invitee_email) = lower(\(inviteeEmail))
                OR invitee_uid = \(inviteeUserId)) AND (\(madeBefore)::timestamptz IS NULL OR created_at < \(madeBefore))
            FOR UPDATE
            """, logger: logger))
        for i in rows {
            guard let transition = InvitationMachine.revoke(i, because: reason) else { continue }
            _ = try await finish(i, transition, userName: nil, on: c)
        }
    }

    /// The invitation with this code, if any (read outside a transaction, not locked).
    func invitation(_ code: String) async throws -> Invitation? {
        try await Self.decode(database.query(
            "SELECT \(unescaped: Self.columns) FROM invitations WHERE code = \(code)")).first
    }

    /// The pending, unexpired invitations sent to `email` (already lowercased; nil: none) or to
    /// the account `uid`, newest first, at most 500.
    func pendingInvitations(forEmail email: String?, uid: String) async throws -> [Invitation] {
        try await Self.decode(database.query("""
            SELECT \(unescaped: Self.columns) FROM invitations
            WHERE (lower(invitee_email) = \(email) OR invitee_uid = \(uid)) AND status = 'pending' AND expires_at > now()
            ORDER BY created_at DESC LIMIT 500
            """))
    }

    /// The invitations sent by `inviter`, newest first, at most 500.
    func invitations(byInviter inviter: String) async throws -> [Invitation] {
        try await Self.decode(database.query("""
            SELECT \(unescaped: Self.columns) FROM invitations WHERE inviter_id = \(inviter) ORDER BY created_at DESC LIMIT 500
            """))
    }

    /// A user as accounts last published them (email, display name, tier), if known.
    /// How many people alarm `id` is shared with, as the alarms stream last told (nil: not known).
    func alarmShares(_ id: String, on c: PostgresConnection) async throws -> Int? {
        try await c.query("SELECT shared FROM alarm_shares WHERE alarm_id = \(id)", logger: logger).first(Int32.self).map(Int.init)
    }

    /// Records how many people alarm `id` is shared with (nil: the alarm is gone). Alarms shared
    /// with nobody, most of them, keep no row (and their upserts write nothing here).
    func recordAlarmShares(_ id: String, shared: Int?, on c: PostgresConnection) async throws {
        if let shared, shared > 0 {
            try await c.query("""
                INSERT INTO alarm_shares (alarm_id, shared) VALUES (\(id), \(Int32(shared)))
                ON CONFLICT (alarm_id) DO UPDATE SET shared = excluded.shared WHERE alarm_shares.shared <> excluded.shared
                """, logger: logger)
        } else {
            try await c.query("DELETE FROM alarm_shares WHERE alarm_id = \(id)", logger: logger)
        }
    }

    func user(_ uid: String, on c: PostgresConnection) async throws -> (email: String, name: String, tier: Tier)? {
        let rows = try await c.query("SELECT email, display_name, tier FROM users WHERE uid = \(uid)", logger: logger)
        guard let (email, name, tier) = try await rows.decode((String, String, String).self).first(where: { _ in true }) else { return nil }
        return (email, name, Tier(rawValue: tier) ?? .free)
    }

    /// The uid of the user who proved this email address (compared with `lower(email)`), if
    /// known: an account that only claims the address is not told of invitations sent to it.
    func uid(forEmail email: String, on c: PostgresConnection) async throws -> String? {
        try await c.query("SELECT uid FROM users WHERE lower(email) = \(email) AND email_verified", logger: logger).first(String.self)
    }

    /// Serializes invitation creation by `inviter` until the transaction ends (`pg_advisory_xact_lock`).
    func lockInviter(_ inviter: String, on c: PostgresConnection) async throws {
        try await c.lockUntilCommit(inviter, hash: .legacy32, logger: logger)
    }

    /// How many invitations `inviter` created in the last hour, and when the oldest of them was
    /// created: the rows of one aggregate query (so exactly one).
    func recentInvitations(by inviter: String, on c: PostgresConnection) async throws -> [(count: Int, oldest: Date?)] {
        let recent = try await c.query("""
            SELECT count(*)::int, min(created_at) FROM invitations WHERE inviter_id = \(inviter) AND created_at > now() - interval '1 hour'
            """, logger: logger)
        var out: [(count: Int, oldest: Date?)] = []
        for try await (count, oldest) in recent.decode((Int, Date?).self) {
            out.append((count, oldest))
        }
        return out
    }

    /// Stores a new pending invitation that expires `lifetime` (whole seconds) from now; nil if
    /// the insert returned no row.
    func insert(code: String, type: String, referenceId: String, referenceName: String, inviterId: String, inviterDisplayName: String,
                inviteeEmail: String?, inviteeUserId: String?, lifetime: Duration, on c: PostgresConnection) async throws -> Invitation? {
        let rows = try await Self.decode(c.query("""
            INSERT INTO invitations (code, type, reference_id, reference_name, inviter_id, inviter_display_name, invitee_email, invitee_uid,
                                     expires_at)
            VALUES (\(code), \(type), \(referenceId), \(referenceName), \(inviterId), \(inviterDisplayName), \(inviteeEmail), \(inviteeUserId),
                    now() + make_interval(secs => \(Double(lifetime.components.seconds))))
            RETURNING \(unescaped: Self.columns)
            """, logger: logger))
        return rows.first
    }

    /// Locks (skipping rows locked elsewhere) up to 1000 pending invitations whose expiry has
    /// passed, earliest expiry first.
    func lockDue(on c: PostgresConnection) async throws -> (now: Date, due: [Invitation]) {
        // The database's clock picks them and is the `now` they are judged by (one clock, so a
        // service host whose clock lags cannot skip a row the query found due).
        let now = try await c.query("SELECT now()", logger: logger).first(Date.self) ?? Date()
        let due = try await Self.decode(c.query("""
            SELECT \(unescaped: Self.columns) FROM invitations WHERE status = 'pending' AND expires_at <= \(now)
                AND (claimed_until IS NULL OR claimed_until <= \(now))   -- one being joined now is spent by its acceptor
            ORDER BY expires_at LIMIT 1000 FOR UPDATE SKIP LOCKED
            """, logger: logger))
        return (now, due)
    }

    /// Inserts or updates a user (email, display name, tier) as accounts published them; logs
    /// with `logger` (the event's).
    func upsertUser(uid: String, email: String, displayName: String, tier: Tier, emailVerified: Bool,
                    on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("""
            INSERT INTO users (uid, email, display_name, tier, email_verified)
            VALUES (\(uid), \(email), \(displayName), \(tier.rawValue), \(emailVerified))
            ON CONFLICT (uid) DO UPDATE SET email = excluded.email, display_name = excluded.display_name, tier = excluded.tier,
                email_verified = excluded.email_verified
            """, logger: logger)
    }

    /// Whether the user proved their address, as accounts last published it (false when unknown).
    func emailVerified(_ uid: String, on c: PostgresConnection) async throws -> Bool {
        try await c.query("SELECT email_verified FROM users WHERE uid = \(uid)", logger: logger).first(Bool.self) ?? false
    }

    /// Forgets a user (their row in `users`); logs with `logger` (the event's).
    func deleteUser(_ uid: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("DELETE FROM users WHERE uid = \(uid)", logger: logger)
    }

    /// Deletes the queued and sent mails to `email` (a deleted account's proven address).
    func forgetMails(to email: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("DELETE FROM mail_outbox WHERE lower(recipient) = lower(\(email))", logger: logger)
    }

    /// Deletes every invitation sent by `inviter`; logs with `logger` (the event's).
    func deleteInvitations(byInviter inviter: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("DELETE FROM invitations WHERE inviter_id = \(inviter)", logger: logger)
    }

    /// Removes a deleted invitee from the invitations that name them: the address (matched
    /// case-insensitively) becomes '' and `accepted_by` is cleared where it is `uid`. Logs with
    /// `logger` (the event's).
    func forgetInvitee(uid: String, email: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("""
            UPDATE invitations SET invitee_email = CASE WHEN lower(invitee_email) = lower(\(email)) THEN '' ELSE invitee_email END,
                accepted_by = NULLIF(accepted_by, \(uid)), invitee_uid = NULLIF(invitee_uid, \(uid))
            WHERE lower(invitee_email) = lower(\(email)) OR accepted_by = \(uid) OR invitee_uid = \(uid)
            """, logger: logger)
    }
}
