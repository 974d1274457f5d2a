import Outbox
import Persistence
import ServiceKit

/// The invitations schema, in order.
enum InvitationsMigrations {
    static let all: [Migration] = [
        OutboxSchema.migration,
        Migration(2, "users read model, invitations", [
            """
            CREATE TABLE users (
                uid text PRIMARY KEY,
                email text NOT NULL,
                display_name text NOT NULL,
                tier text NOT NULL
            )
            """,
            "CREATE INDEX users_email ON users (lower(email))",
            """
            CREATE TABLE invitations (
                code text PRIMARY KEY,
                type text NOT NULL CHECK (type IN ('alarm', 'group')),
                reference_id text NOT NULL,
                reference_name text NOT NULL,
                inviter_id text NOT NULL,
                inviter_display_name text NOT NULL,
                invitee_email text,
                status text NOT NULL DEFAULT 'pending',
                created_at timestamptz NOT NULL DEFAULT now(),
                expires_at timestamptz NOT NULL,
                accepted_at timestamptz,
                accepted_by text,
                finished_at timestamptz
            )
            """,
            "CREATE INDEX invitations_inviter ON invitations (inviter_id, created_at)",
            "CREATE INDEX invitations_invitee ON invitations (lower(invitee_email)) WHERE status = 'pending'",
            "CREATE INDEX invitations_reference ON invitations (reference_id) WHERE status = 'pending'",
            "CREATE INDEX invitations_expiry ON invitations (expires_at) WHERE status = 'pending'",
        ]),
        OutboxSchema.payloadStatistics(3),
        // Whether a user proved their address: only a proven address's deletion revokes the
        // invitations sent to it (anyone may sign up with an address they do not own).
        Migration(4, "users' proven addresses", [
            "ALTER TABLE users ADD COLUMN email_verified boolean NOT NULL DEFAULT false",
        ]),
        // Invitations to an account (sharing an alarm with a group member, say), not an address.
        Migration(5, "invitations to an account", [
            "ALTER TABLE invitations ADD COLUMN invitee_uid text",
            "CREATE INDEX invitations_invitee_uid ON invitations (invitee_uid) WHERE status = 'pending'",
        ]),
        // Invitations to an address no account has proved go out by mail, queued with the invitation.
        Migration(6, "mail outbox", [MailOutbox.createTable, MailOutbox.createIndex]),
        OutboxSchema.leanIndexes(7),
        // How many people each alarm is shared with, from the alarms stream: an accept past the
        // cap is refused here, before the invitation is spent (issue 57).
        Migration(8, "alarm share counts", [
            "CREATE TABLE alarm_shares (alarm_id text PRIMARY KEY, shared integer NOT NULL)",
        ]),
        // Who is joining through a group invitation until when (AcceptClaim): the member is added
        // in accounts between two transactions, and the claim keeps an open link to one acceptor.
        Migration(9, "acceptance claims", [
            "ALTER TABLE invitations ADD COLUMN claimed_by text, ADD COLUMN claimed_until timestamptz",
        ]),
    ]
}
