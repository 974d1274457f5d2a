import Foundation
import Wire

/// Why an invitation cannot be made, seen or answered; ``serviceError`` is what the caller gets.
public enum InvitationRefusal: Error, Equatable, Sendable {
    /// Unknown, or not the caller's to see (the same answer for both).
    case notFound
    case sentToSomeoneElse
    /// Sent to the caller's address, which the caller's account has not proved yet.
    case addressNotProven
    case alreadyAccepted
    case expired(at: Date)
    /// Declined or revoked (or a word of a newer release): `status`.
    case notPending(status: String)
    /// A revoke of an invitation no longer pending (`status`).
    case alreadyFinished(status: String)
    case ownInvitation
    case linkCannotBeDeclined
    /// The inviter no longer has Premium, which sharing needs.
    case inviterNotPremium
    /// The alarm is shared with the most people it may be.
    case alarmFull(shares: Int)
    /// Someone else is joining through this group invitation right now (their claim is live).
    case beingAccepted

    public var serviceError: ServiceError {
        switch self {
        case .notFound: ServiceError(.notFound, "no such invitation")
        case .sentToSomeoneElse: ServiceError(.permissionDenied, "this invitation was sent to someone else")
        case .addressNotProven:
            ServiceError(.emailNotVerified, """
                this invitation was sent to your address, which this account has not proved yet: open the link of the \
                verification mail (POST /v1/me/email-verification sends one), sign in again, then answer it
                """)
        case .alreadyAccepted: ServiceError(.invitationAlreadyAccepted, "this invitation was already accepted")
        case .expired(let at): ServiceError(.invitationExpired, "this invitation expired on \(ISOTime.format(at))")
        case .notPending(let status): ServiceError(.invitationNotPending, "this invitation was \(status)")
        case .alreadyFinished(let status): ServiceError(.invitationNotPending, "this invitation was already \(status)")
        case .ownInvitation: ServiceError(.validationFailed, "you cannot answer your own invitation")
        case .linkCannotBeDeclined: ServiceError(.validationFailed, "a link invitation cannot be declined; just do not accept it")
        case .inviterNotPremium:
            ServiceError(.tierRequired, "the plan of the person who invited you no longer includes sharing; ask them for a new invitation")
        case .alarmFull(let shares):
            ServiceError(.groupMemberLimit, "this alarm is already shared with \(shares) people, the most it may be; ask its owner to make room")
        case .beingAccepted:
            ServiceError(.syncConflict, "someone else is joining through this invitation right now; try again in a moment")
        }
    }
}
