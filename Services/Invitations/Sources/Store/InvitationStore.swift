import Contracts
import Foundation
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
        accepted_at, accepted_by
        """

    static func link(_ code: String) -> String { "https://chronir.app/invite/\(code)" }

    static func decode(_ rows: PostgresRowSequence) async throws -> [Invitation] {
        var out: [Invitation] = []
        for try await r in rows.decode((String, String, String, String, String, String, String?, String, Date, Date, Date?, String?).self) {
            out.append(Invitation(id: r.0, type: r.1, referenceId: r.2, referenceName: r.3, inviterId: r.4, inviterDisplayName: r.5,
                                  inviteeEmail: r.6, status: r.7, createdAt: r.8, expiresAt: r.9, acceptedAt: r.10, acceptedBy: r.11,
                                  deepLink: link(r.0)))
        }
        return out
    }

    func lock(_ code: String, on c: PostgresConnection) async throws -> Invitation? {
        try await Self.decode(c.query("SELECT \(unescaped: Self.columns) FROM invitations WHERE code = \(code) FOR UPDATE", logger: logger)).first
    }

    /// Sets the status (and acceptance) and publishes the change.
    func finish(_ i: Invitation, status: String, event: TypedEvent<InvitationsEvents.Changed>, user: String?, userName: String?, reason: String?,
                on c: PostgresConnection) async throws -> Invitation {
        let rows = try await Self.decode(c.query("""
            UPDATE invitations SET status = \(status), finished_at = now(),
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
    func revokePending(reference: String? = nil, inviter: String? = nil, inviteeEmail: String? = nil, reason: String,
                       on c: PostgresConnection) async throws {
        let rows = try await Self.decode(c.query("""
            SELECT \(unescaped: Self.columns) FROM invitations
            WHERE status = 'pending' AND (reference_id = \(reference) OR inviter_id = \(inviter) OR lower(invitee_email) = lower(\(inviteeEmail)))
            FOR UPDATE
            """, logger: logger))
        for i in rows {
            _ = try await finish(i, status: "revoked", event: InvitationsEvents.revoked, user: nil, userName: nil, reason: reason, on: c)
        }
    }
}
