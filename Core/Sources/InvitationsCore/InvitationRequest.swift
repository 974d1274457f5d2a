import AccountsCore
import Contracts
import Foundation
import Wire

/// A create request after its checks: what the shell then authorizes (asking the owners of the
/// data) and stores.
public struct NewInvitation: Equatable, Sendable {
    public var kind: InvitationKind
    public var referenceId: String
    /// Normalized (``EmailKey/normalize(_:)``).
    public var inviteeEmail: String?
    public var inviteeUserId: String?
}

extension InvitationMachine {
    /// Checks a create request from `actor` (whose token carried `callerEmail`, normalized):
    /// its kind, its reference, and at most one invitee, never the caller. The invitee's address
    /// follows the rule sign-up follows (``AccountValidation/emailPattern``): an invitation to an
    /// address that can never open an account would wait for nobody.
    public static func validate(type: String, referenceId: String, inviteeEmail: String?, inviteeUserId: String?,
                                actor: String, callerEmail: String?) throws -> NewInvitation {
        guard let kind = InvitationKind(rawValue: type) else { throw ServiceError(.validationFailed, "type must be alarm or group") }
        guard !referenceId.isEmpty else { throw ServiceError(.validationFailed, "referenceId is required") }
        guard referenceId.count <= 64 else { throw ServiceError(.validationFailed, "referenceId must be at most 64 characters") }
        let email = try inviteeEmail.map { raw -> String in
            let e = EmailKey.normalize(raw)
            try HumanText.check(e, field: "inviteeEmail")
            guard e.unicodeScalars.count <= 254, e.range(of: AccountValidation.emailPattern, options: .regularExpression) != nil else {
                throw ServiceError(.validationFailed, "inviteeEmail is not an email address", details: .object(["field": .string("inviteeEmail")]))
            }
            return e
        }
        if let email, email == callerEmail { throw ServiceError(.validationFailed, "you cannot invite yourself") }
        if let uid = inviteeUserId {
            guard email == nil else { throw ServiceError(.validationFailed, "give inviteeEmail or inviteeUserId, not both") }
            guard !uid.isEmpty, uid.count <= 64 else { throw ServiceError(.validationFailed, "inviteeUserId must be a user id") }
            guard uid != actor else { throw ServiceError(.validationFailed, "you cannot invite yourself") }
        }
        return NewInvitation(kind: kind, referenceId: referenceId, inviteeEmail: email, inviteeUserId: inviteeUserId)
    }

    /// The refusal of one more invitation by an inviter who made `count` in the last hour, the
    /// oldest of them at `oldest`, under a limit of `perHour`: `CA019` with the seconds until the
    /// oldest leaves the hour. Nil while under the limit.
    public static func rateRefusal(count: Int, oldest: Date?, perHour: Int, now: Date) -> ServiceError? {
        WindowLimit(perHour, per: 3600).retryAfter(count: count, oldest: oldest, now: now).map {
            ServiceError.rateLimited("at most \(perHour) invitations per hour", retryAfter: $0)
        }
    }
}
