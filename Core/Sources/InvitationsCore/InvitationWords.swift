import Contracts

/// An invitation's state, as its `status` column and the API spell it. Can go: `pending` →
/// `accepted`, `declined`, `revoked` or `expired`; the other four are final. A word this release
/// does not know (written by a newer one) is kept as it is and is final here.
public enum InvitationStatus: Equatable, Sendable {
    case pending, accepted, declined, revoked, expired
    case unknown(String)

    public init(_ raw: String) {
        switch raw {
        case "pending": self = .pending
        case "accepted": self = .accepted
        case "declined": self = .declined
        case "revoked": self = .revoked
        case "expired": self = .expired
        default: self = .unknown(raw)
        }
    }

    public var rawValue: String {
        switch self {
        case .pending: "pending"
        case .accepted: "accepted"
        case .declined: "declined"
        case .revoked: "revoked"
        case .expired: "expired"
        case .unknown(let raw): raw
        }
    }
}

/// What an invitation is to: an alarm (shared with the invitee) or a group (joined).
public enum InvitationKind: String, Sendable, Equatable {
    case alarm, group
}

/// Why a pending invitation was revoked (the `reason` of its `invitations.revoked` event).
public enum RevokeReason: String, Sendable, Equatable {
    /// Its inviter withdrew it.
    case inviter
    case inviterDeleted = "inviter deleted"
    case inviteeDeleted = "invitee deleted"
    case alarmDeleted = "alarm deleted"
    case groupDeleted = "group deleted"
    /// The inviter's account was taken back by the owner of its address (a reset proved it).
    case accountTakenBack = "account taken back"
}

extension Invitation {
    /// The status as a word of the state machine.
    public var state: InvitationStatus { InvitationStatus(status) }
    /// The kind, nil for a word this release does not know.
    public var kind: InvitationKind? { InvitationKind(rawValue: type) }
}
