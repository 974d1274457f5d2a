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
        var h = EventHandlers()
        h.on(AccountsEvents.userUpserted, AccountsEvents.UserUpserted.self) { u, ctx, c in
            try await c.query("""
                INSERT INTO users (uid, email, display_name, tier) VALUES (\(u.uid), \(u.email), \(u.displayName), \(u.tier.rawValue))
                ON CONFLICT (uid) DO UPDATE SET email = excluded.email, display_name = excluded.display_name, tier = excluded.tier
                """, logger: ctx.logger)
        }
        h.on(AccountsEvents.userDeleted, AccountsEvents.UserDeleted.self) { u, ctx, c in
            try await c.query("DELETE FROM users WHERE uid = \(u.uid)", logger: ctx.logger)
            try await store.revokePending(inviter: u.uid, reason: "inviter deleted", on: c)
        }
        h.on(AccountsEvents.groupDeleted, AccountsEvents.GroupDeleted.self) { g, _, c in
            try await store.revokePending(reference: g.groupId, reason: "group deleted", on: c)
        }
        return h
    }

    var alarms: EventHandlers {
        var h = EventHandlers()
        h.on(AlarmsEvents.alarmDeleted, AlarmsEvents.AlarmState.self) { a, _, c in
            try await store.revokePending(reference: a.id, reason: "alarm deleted", on: c)
        }
        return h
    }
}
