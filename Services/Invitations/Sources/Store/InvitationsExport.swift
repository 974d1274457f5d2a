import PostgresNIO
import ServiceKit

/// The invitations service's part of a data export: invitations the user sent, and those sent
/// to their account, to the address they proved, or accepted by them. An account that only
/// claims an address (signed up with it, never proved it) is not shown what was sent there.
enum InvitationsExport {
    static let sections: [ExportSection] = [
        ExportSection("invitationsSent") { uid, after, limit in
            "SELECT code, (to_jsonb(i) - 'claimed_by' - 'claimed_until')::text FROM invitations i WHERE inviter_id = \(uid) AND code > \(after) ORDER BY code LIMIT \(limit)"
        },
        ExportSection("invitationsReceived") { uid, after, limit in
            """
            SELECT i.code, (to_jsonb(i) - 'claimed_by' - 'claimed_until')::text FROM invitations i
            WHERE (i.accepted_by = \(uid) OR i.invitee_uid = \(uid)
                   OR lower(i.invitee_email) = (SELECT lower(email) FROM users WHERE uid = \(uid) AND email_verified))
              AND i.inviter_id <> \(uid) AND i.code > \(after)
            ORDER BY i.code LIMIT \(limit)
            """
        },
    ]
}
