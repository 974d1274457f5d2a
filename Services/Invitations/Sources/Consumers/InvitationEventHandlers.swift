import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO

/// What invitations takes from other streams: users (names, emails, tiers) from accounts; and
/// invitations that can no longer be honoured — a deleted alarm, group or inviter — are revoked.
struct InvitationEventHandlers: Sendable {
    let store: InvitationStore

    var accounts: EventHandlers {
        var h = EventHandlers(AccountsEvents.self)
        h.ignore(AccountsEvents.deviceUpserted, AccountsEvents.deviceRemoved, AccountsEvents.sessionRevoked, AccountsEvents.groupUpserted)
        h.on(AccountsEvents.userUpserted) { u, ctx, c in
            try await c.query("""
                INSERT INTO users (uid, email, display_name, tier) VALUES (\(u.uid), \(u.email), \(u.displayName), \(u.tier.rawValue))
                ON CONFLICT (uid) DO UPDATE SET email = excluded.email, display_name = excluded.display_name, tier = excluded.tier
                """, logger: ctx.logger)
        }
        h.on(AccountsEvents.userDeleted) { u, ctx, c in
            try await c.query("DELETE FROM users WHERE uid = \(u.uid)", logger: ctx.logger)
            // Sent: revoked (announced), then gone. Received: revoked if pending, and kept in
            // the inviter's list without the address or the uid.
            try await store.revokePending(inviter: u.uid, reason: "inviter deleted", on: c)
            try await c.query("DELETE FROM invitations WHERE inviter_id = \(u.uid)", logger: ctx.logger)
            try await store.revokePending(inviteeEmail: u.email, reason: "invitee deleted", on: c)
            try await c.query("""
                UPDATE invitations SET invitee_email = CASE WHEN lower(invitee_email) = lower(\(u.email)) THEN '' ELSE invitee_email END,
                    accepted_by = NULLIF(accepted_by, \(u.uid))
                WHERE lower(invitee_email) = lower(\(u.email)) OR accepted_by = \(u.uid)
                """, logger: ctx.logger)
        }
        h.on(AccountsEvents.groupDeleted) { g, _, c in
            try await store.revokePending(reference: g.groupId, reason: "group deleted", on: c)
        }
        return h
    }

    var alarms: EventHandlers {
        var h = EventHandlers(AlarmsEvents.self)
        h.ignore(AlarmsEvents.alarmUpserted, AlarmsEvents.alarmCompleted, AlarmsEvents.alarmSkipped, AlarmsEvents.alarmMissed, AlarmsEvents.alarmSnoozed)
        h.on(AlarmsEvents.alarmDeleted) { a, _, c in
            try await store.revokePending(reference: a.id, reason: "alarm deleted", on: c)
        }
        return h
    }
}
