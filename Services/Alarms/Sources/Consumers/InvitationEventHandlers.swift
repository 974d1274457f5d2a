import AlarmsCore
import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO

/// Accepted alarm invitations from the invitations stream: the acceptor joins the alarm's
/// `sharedWith` (idempotently; nothing happens for a deleted alarm), or, while the owner is
/// below Premium, what its suspended sharing keeps for the upgrade.
struct InvitationEventHandlers: Sendable {
    let store: AlarmStore
    let changes: AlarmChanges

    /// Whether `alarm`'s owner may share it now: on Premium, or its group's owner is.
    func sharingAllowed(_ alarm: Alarm, on c: PostgresConnection) async throws -> Bool {
        if try await store.tier(of: alarm.ownerId, on: c) == .premium { return true }
        guard let g = alarm.groupId else { return false }
        return try await store.groupOwnerIsPremium(g, on: c)
    }

    var handlers: EventHandlers {
        var h = EventHandlers(InvitationsEvents.self)
        h.ignore(InvitationsEvents.created, InvitationsEvents.declined, InvitationsEvents.revoked, InvitationsEvents.expired)
        h.on(InvitationsEvents.accepted) { e, ctx, c in
            guard e.invitation.type == "alarm", let user = e.userId else { return }
            let id = e.invitation.referenceId
            var full = false
            var suspended = false
            let revised = try await changes.revise(id, actor: user, tellActor: true, on: c) { n in
                guard n.deletedAt == nil, !n.members.contains(user) else { return }
                // The owner's plan is checked here, where the sharing happens: invitations reads
                // it from a copy two hops behind billing, and an accept can race a lapse
                // (finding 6). Below Premium the acceptor is kept with the suspended sharing.
                if try await !sharingAllowed(n, on: c) {
                    suspended = true
                    return
                }
                // Invitations refuses an accept past the cap from its copy of the count; two
                // accepts racing past it are stopped here.
                guard n.sharedWith.count < Alarm.maxSharedWith else { full = true; return }
                n.sharedWith = (n.sharedWith + [user]).sorted()
                n.isShared = true
            }
            if suspended, let owner = revised?.after.ownerId {
                let kept = try await store.lockSuspended(id, on: c)?.sharedWith ?? []
                if kept.count < Alarm.maxSharedWith || kept.contains(user) {
                    try await store.keepSuspendedMember(user, alarm: id, owner: owner, on: c)
                    ctx.logger.notice("accepted invitation kept for when the owner's sharing comes back", metadata: ["alarm": "\(id)"])
                } else {
                    full = true
                }
            }
            if full {
                ctx.logger.notice("accepted invitation for an alarm shared with the most people already", metadata: ["alarm": "\(id)"])
            } else if revised == nil || revised?.after.deletedAt != nil {
                ctx.logger.notice("accepted invitation for a deleted alarm", metadata: ["alarm": "\(id)"])
            }
        }
        return h
    }
}
