import Contracts
import Foundation
import Messaging

extension AlarmHandlers {
    /// Takes a member off a shared alarm (`DELETE /v1/alarms/{id}/members/{uid}`): the owner
    /// removes anyone, a member leaves (US-10.1; `uid` "me" is the caller). A member who was the
    /// assignee is unassigned. The owner cannot leave their own alarm: they delete it.
    func removeMember(_ req: AlarmsMethods.RemoveMember.Request, actor: String) async throws -> Alarm {
        let member = req.userId == "me" ? actor : req.userId
        let changed: Alarm? = try await outbox.transaction { c in
            try await changes.revise(req.id, actor: actor, on: c) { a in
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
