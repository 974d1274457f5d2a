import Contracts
import Wire
import Foundation

/// A change of an invitation's state that the shell writes in one transaction: the new status
/// (with `accepted_at`/`accepted_by` for an acceptance) and the event that announces it.
public struct InvitationTransition: Equatable, Sendable {
    /// One of `accepted`, `declined`, `revoked`, `expired`.
    public var to: InvitationStatus
    /// Who answered (accepted or declined); nil for a revoke or an expiry.
    public var user: String?
    public var reason: RevokeReason?

    public init(to: InvitationStatus, user: String? = nil, reason: RevokeReason? = nil) {
        self.to = to
        self.user = user
        self.reason = reason
    }

    /// The event that announces it.
    public var event: TypedEvent<InvitationsEvents.Changed> {
        switch to {
        case .accepted: InvitationsEvents.accepted
        case .declined: InvitationsEvents.declined
        case .revoked: InvitationsEvents.revoked
        default: InvitationsEvents.expired
        }
    }
}

/// What the facts of an acceptance are, read by the shell under the invitation's lock.
public struct AcceptFacts: Equatable, Sendable {
    /// The inviter's tier as this service's read model knows it; nil when it does not know them.
    public var inviterTier: Tier?
    /// How many people the invitation's alarm is shared with; nil for a group invitation or an
    /// alarm not known here.
    public var alarmShares: Int?
    /// The claim on a group invitation being accepted, as stored; nil when there is none.
    public var claim: AcceptClaim?
    /// Whether this acceptance has added the caller to the group already (under its claim).
    public var added: Bool

    public init(inviterTier: Tier?, alarmShares: Int?, claim: AcceptClaim? = nil, added: Bool = false) {
        self.inviterTier = inviterTier
        self.alarmShares = alarmShares
        self.claim = claim
        self.added = added
    }
}

/// Who is joining through a group invitation, and until when the invitation is theirs to spend:
/// accepting one adds the member in accounts between two transactions (no call to another
/// service under the invitation's lock), and the claim, written by the first, keeps an open link
/// to one acceptor at a time until the second spends it.
public struct AcceptClaim: Equatable, Sendable {
    /// The acceptor.
    public var by: String
    /// When the claim lapses (an acceptor that stopped between the two transactions).
    public var until: Date

    public init(by: String, until: Date) {
        self.by = by
        self.until = until
    }

    /// How long a claim holds: far beyond one call to accounts (5 s at the most), short enough
    /// that an acceptor who stopped half-way holds the link up only briefly.
    public static let lease: TimeInterval = 30
}

/// What answering an invitation comes to.
public enum AnswerDecision: Equatable, Sendable {
    case refuse(InvitationRefusal)
    /// Found past its expiry: write this transition and commit, then refuse with
    /// ``InvitationRefusal/expired(at:)`` (a refusal thrown inside the transaction rolled the
    /// mark back).
    case expireThenRefuse(InvitationTransition, InvitationRefusal)
    /// Write this transition; for a group invitation, add the caller to `addToGroup` first (the
    /// member limit is checked where members live, before the invitation is spent).
    case finish(InvitationTransition, addToGroup: String?)
    /// A group invitation: write this claim and commit, add the caller to `group` in accounts,
    /// then accept again, which finds the caller's claim and finishes.
    case claimThenAdd(AcceptClaim, group: String)
}

/// How an invitation may be shown to a caller (`GET /v1/invitations/{code}`).
public enum InvitationView: Equatable, Sendable {
    /// All of it: its inviter, its invitee (once they proved the address), a manager of its group.
    case whole
    /// An open link seen by anyone else: what the accept screen needs, not who accepted it.
    case openLink(Invitation)
    /// A group invitation whose answer depends on whether the caller manages the group: ask
    /// accounts and decide again with `managesGroup`.
    case needsGroupRole
    case refuse(InvitationRefusal)
}

/// The invitation lifecycle (`chronir-api.md` §6): who may see and answer an invitation, from
/// which state, and what each answer writes. Pure: the shell reads the invitation (locked) and
/// the facts, asks here, and performs the answer; time is passed in.
public enum InvitationMachine {
    /// Whether `actor` (with `caller`'s address) may answer `i` now: bound to them, pending, not
    /// their own. Nil when they may.
    public static func answerRefusal(_ i: Invitation, actor: String, caller: CallerAddress) -> InvitationRefusal? {
        if let invitee = i.inviteeUserId, invitee != actor { return .sentToSomeoneElse }
        if let invitee = i.inviteeEmail {
            guard caller.holds(invitee) else { return .sentToSomeoneElse }
            guard caller.proven else { return .addressNotProven }
        }
        switch i.state {
        case .pending: break
        case .accepted: return .alreadyAccepted
        case .expired: return .expired(at: i.expiresAt)
        case .declined, .revoked, .unknown: return .notPending(status: i.status)
        }
        guard i.inviterId != actor else { return .ownInvitation }
        return nil
    }

    /// Accepting `i` at `now`.
    /// A group invitation is claimed first (``AcceptClaim``): another acceptor's live claim
    /// refuses. Once this acceptance has added the member (`facts.added`) it is spent, whatever
    /// became of the caller's claim (a lease that ran out while the add took long) and of the
    /// expiry and the plan, which held when it claimed: a member is never left in the group with
    /// the invitation unspent because time passed. The caller's own live claim without the add
    /// (a second request while the first is adding) is renewed, and this request adds too
    /// (idempotently) before it spends the invitation.
    public static func accept(_ i: Invitation, actor: String, caller: CallerAddress, facts: AcceptFacts, now: Date) -> AnswerDecision {
        if let refusal = answerRefusal(i, actor: actor, caller: caller) { return .refuse(refusal) }
        let claim = facts.claim.flatMap { $0.until > now ? $0 : nil }
        if i.kind == .group {
            if let claim, claim.by != actor { return .refuse(.beingAccepted) }
            if facts.added { return .finish(InvitationTransition(to: .accepted, user: actor), addToGroup: nil) }
            if claim != nil {
                return .claimThenAdd(AcceptClaim(by: actor, until: now.addingTimeInterval(AcceptClaim.lease)), group: i.referenceId)
            }
        }
        if i.expiresAt <= now { return .expireThenRefuse(InvitationTransition(to: .expired), .expired(at: i.expiresAt)) }
        if let tier = facts.inviterTier, tier != .premium { return .refuse(.inviterNotPremium) }
        if i.kind == .alarm, let shares = facts.alarmShares, shares >= Alarm.maxSharedWith { return .refuse(.alarmFull(shares: shares)) }
        if i.kind == .group { return .claimThenAdd(AcceptClaim(by: actor, until: now.addingTimeInterval(AcceptClaim.lease)), group: i.referenceId) }
        return .finish(InvitationTransition(to: .accepted, user: actor), addToGroup: nil)
    }

    /// Declining `i`: only an invitation bound to someone (a link is simply not accepted).
    /// Its expiry is not checked: declining an expired-but-unswept invitation declines it.
    public static func decline(_ i: Invitation, actor: String, caller: CallerAddress) -> AnswerDecision {
        if let refusal = answerRefusal(i, actor: actor, caller: caller) { return .refuse(refusal) }
        guard i.inviteeEmail != nil || i.inviteeUserId != nil else { return .refuse(.linkCannotBeDeclined) }
        return .finish(InvitationTransition(to: .declined, user: actor), addToGroup: nil)
    }

    /// Revoking `i` by `actor`: its inviter only (anyone else is told it does not exist), while pending.
    public static func revoke(_ i: Invitation, actor: String) -> Result<InvitationTransition, InvitationRefusal> {
        guard i.inviterId == actor else { return .failure(.notFound) }
        guard i.state == .pending else { return .failure(.alreadyFinished(status: i.status)) }
        return .success(InvitationTransition(to: .revoked, reason: .inviter))
    }

    /// Revoking `i` because of `reason` (its alarm, group, inviter or invitee went): a pending
    /// one only.
    public static func revoke(_ i: Invitation, because reason: RevokeReason) -> InvitationTransition? {
        i.state == .pending ? InvitationTransition(to: .revoked, reason: reason) : nil
    }

    /// The sweeper's expiry of `i` at `now`: a pending invitation past its expiry.
    public static func expire(_ i: Invitation, now: Date) -> InvitationTransition? {
        i.state == .pending && i.expiresAt <= now ? InvitationTransition(to: .expired) : nil
    }

    /// How `i` shows to `actor`: whole to its inviter and its invitee (an address's invitee once
    /// proved), and to a manager of its group (`managesGroup`, asked only when needed); an open
    /// link shows anyone else a redacted copy; a direct invitation is not found for anyone else
    /// (its address, inviter and state are not theirs).
    public static func view(_ i: Invitation, actor: String, caller: CallerAddress, managesGroup: Bool? = nil) -> InvitationView {
        if i.inviterId == actor || i.inviteeUserId == actor { return .whole }
        if let invitee = i.inviteeEmail, caller.holds(invitee) {
            return caller.proven ? .whole : .refuse(.addressNotProven)
        }
        if i.kind == .group {
            guard let manages = managesGroup else { return .needsGroupRole }
            if manages { return .whole }
        }
        guard i.inviteeEmail == nil, i.inviteeUserId == nil else { return .refuse(.notFound) }
        var open = i
        open.acceptedBy = nil
        open.acceptedAt = nil
        return .openLink(open)
    }
}
