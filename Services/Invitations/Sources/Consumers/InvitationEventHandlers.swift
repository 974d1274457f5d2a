import Contracts
import InvitationsCore
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
            try await store.upsertUser(uid: u.uid, email: u.email, displayName: u.displayName, tier: u.tier,
                                       emailVerified: u.emailVerified ?? false, on: c, logger: ctx.logger)
            // The owner took the account back: invitations made before (maybe by someone else) are revoked.
            if let at = u.takenBackAt { try await store.revokePending(inviter: u.uid, madeBefore: at, reason: .accountTakenBack, on: c) }
        }
        h.on(AccountsEvents.userDeleted) { u, ctx, c in
            // Only an owner who proved the address speaks for it: an account that merely signed
            // up with someone's address cannot revoke the invitations sent to that person.
            let proven = try await store.emailVerified(u.uid, on: c)
            try await store.deleteUser(u.uid, on: c, logger: ctx.logger)
            // Sent: revoked (announced), then gone. Received: revoked if pending, and kept in
            // the inviter's list without the address or the uid.
            try await store.revokePending(inviter: u.uid, reason: .inviterDeleted, on: c)
            try await store.revokePending(inviteeUserId: u.uid, reason: .inviteeDeleted, on: c)
            try await store.deleteInvitations(byInviter: u.uid, on: c, logger: ctx.logger)
            if proven {
                try await store.revokePending(inviteeEmail: u.email, reason: .inviteeDeleted, on: c)
                try await store.forgetMails(to: u.email, on: c, logger: ctx.logger)
            }
            try await store.forgetInvitee(uid: u.uid, email: proven ? u.email : "", on: c, logger: ctx.logger)
        }
        h.on(AccountsEvents.groupDeleted) { g, _, c in
            try await store.revokePending(reference: g.groupId, reason: .groupDeleted, on: c)
        }
        return h
    }

    var alarms: EventHandlers {
        var h = EventHandlers(AlarmsEvents.self)
        h.ignore(AlarmsEvents.alarmCompleted, AlarmsEvents.alarmSkipped, AlarmsEvents.alarmMissed, AlarmsEvents.alarmSnoozed)
        h.on(AlarmsEvents.alarmUpserted) { a, _, c in
            try await store.recordAlarmShares(a.id, shared: a.deleted ? nil : max(0, a.members.count - 1), on: c)
        }
        h.on(AlarmsEvents.alarmDeleted) { a, _, c in
            try await store.recordAlarmShares(a.id, shared: nil, on: c)
            try await store.revokePending(reference: a.id, reason: .alarmDeleted, on: c)
        }
        return h
    }
}
