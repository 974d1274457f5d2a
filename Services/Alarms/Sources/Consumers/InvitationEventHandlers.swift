import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO

/// Accepted alarm invitations from the invitations stream: the acceptor joins the alarm's
/// `sharedWith` (idempotently; nothing happens for a deleted alarm).
struct InvitationEventHandlers: Sendable {
    let store: AlarmStore
    let changes: AlarmChanges

    var handlers: EventHandlers {
        var h = EventHandlers(InvitationsEvents.self)
        h.ignore(InvitationsEvents.created, InvitationsEvents.declined, InvitationsEvents.revoked, InvitationsEvents.expired)
        h.on(InvitationsEvents.accepted) { e, ctx, c in
            guard e.invitation.type == "alarm", let user = e.userId else { return }
            var full = false
            let revised = try await changes.revise(e.invitation.referenceId, actor: user, tellActor: true, on: c) { n in
                guard n.deletedAt == nil, !n.members.contains(user) else { return }
                // Invitations refuses an accept past the cap from its copy of the count; two
                // accepts racing past it are stopped here.
                guard n.sharedWith.count < Alarm.maxSharedWith else { full = true; return }
                n.sharedWith = (n.sharedWith + [user]).sorted()
                n.isShared = true
            }
            if full {
                ctx.logger.notice("accepted invitation for an alarm shared with the most people already", metadata: ["alarm": "\(e.invitation.referenceId)"])
            } else if revised == nil || revised?.after.deletedAt != nil {
                ctx.logger.notice("accepted invitation for a deleted alarm", metadata: ["alarm": "\(e.invitation.referenceId)"])
            }
        }
        return h
    }
}
