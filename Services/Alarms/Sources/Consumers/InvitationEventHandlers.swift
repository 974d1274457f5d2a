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
            guard let a = try await store.lock(e.invitation.referenceId, on: c), a.deletedAt == nil else {
                ctx.logger.notice("accepted invitation for a deleted alarm", metadata: ["alarm": "\(e.invitation.referenceId)"])
                return
            }
            guard !a.members.contains(user) else { return }
            var n = a
            n.sharedWith = (a.sharedWith + [user]).sorted()
            n.isShared = true
            n.version = a.version + 1
            n.updatedAt = Date()
            try await store.update(n, on: c)
            try await changes.record(before: a, after: n, actor: user, tellActor: true, on: c)
        }
        return h
    }
}
