import AlarmsCore
import Contracts
import Foundation
import Messaging

extension AlarmHandlers {
    /// Takes a member off a shared alarm (`DELETE /v1/alarms/{id}/members/{uid}`): the owner
    /// removes anyone, a member leaves (US-10.1; `uid` "me" is the caller). A member who was the
    /// assignee is unassigned. The owner cannot leave their own alarm: they delete it. While the
    /// owner's sharing is suspended (below Premium) the same request takes the member off what
    /// comes back on an upgrade.
    func removeMember(_ req: AlarmsMethods.RemoveMember.Request, actor: String) async throws -> Alarm {
        let member = req.userId == "me" ? actor : req.userId
        let changed: Alarm? = try await outbox.transaction { c in
            // While the owner's sharing is suspended the member is kept for its return: they can
            // still leave, and the owner can still take them off (finding 5).
            // The alarm's row is locked before the kept sharing's, in the order a tier change takes them.
            if let a = try await store.lock(req.id, on: c), a.deletedAt == nil, !a.sharedWith.contains(member),
               let kept = try await store.lockSuspended(req.id, on: c), kept.sharedWith.contains(member) {
                guard a.ownerId == actor || member == actor else { throw Self.notFound(req.id) }
                try await store.dropSuspendedMember(member, alarm: a.id, on: c)
                return a
            }
            return try await changes.revise(req.id, actor: actor, on: c) { a in
                guard a.isVisible(to: actor), a.deletedAt == nil else { throw Self.notFound(req.id) }
                guard a.ownerId == actor || member == actor else {
                    throw ServiceError(.permissionDenied, "only the owner takes other members off alarm \(a.id)")
                }
                guard member != a.ownerId else {
                    throw ServiceError(.validationFailed, "the owner cannot leave alarm \(a.id); delete it instead")
                }
                guard let n = AlarmSharing.removing(member, from: a) else {
                    throw ServiceError(.notFound, "\(member) is not a member of alarm \(a.id)")
                }
                a = n
            }?.after
        }
        guard let changed else { throw Self.notFound(req.id) }
        return changed
    }
}
