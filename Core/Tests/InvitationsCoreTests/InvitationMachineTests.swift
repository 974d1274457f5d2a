import Contracts
import Foundation
import InvitationsCore
import Testing
import Wire

/// The invitation lifecycle without a database: every state × every answer, who may see what,
/// and the create checks (the suite tests `GroupsInvitationsTests`, `UnprovenInviteeTests` and
/// `StaleInvitationTests` keep one path each through the running services).
@Suite("Invitation lifecycle (InvitationsCore)")
struct InvitationMachineTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let inviter = "u-inviter"
    static let invitee = "u-invitee"

    static func invitation(_ kind: InvitationKind = .alarm, status: String = "pending", email: String? = nil, uid: String? = nil,
                           expiresIn: TimeInterval = 3600) -> Invitation {
        Invitation(id: "code", type: kind.rawValue, referenceId: "ref-1", referenceName: "Rent", inviterId: inviter,
                   inviterDisplayName: "Ann", inviteeEmail: email, inviteeUserId: uid, status: status,
                   createdAt: now.addingTimeInterval(-60), expiresAt: now.addingTimeInterval(expiresIn),
                   acceptedAt: status == "accepted" ? now : nil, acceptedBy: status == "accepted" ? "someone" : nil,
                   deepLink: "https://chronir.app/invite/code")
    }

    static let stranger = CallerAddress(email: "x@example.com", proven: true)
    static let premium = AcceptFacts(inviterTier: .premium, alarmShares: 0)

    @Test("only a pending invitation can be answered; each final state its own refusal", arguments: [
        ("pending", nil), ("accepted", InvitationRefusal.alreadyAccepted), ("declined", .notPending(status: "declined")),
        ("revoked", .notPending(status: "revoked")), ("paused-by-a-newer-release", .notPending(status: "paused-by-a-newer-release")),
    ] as [(String, InvitationRefusal?)])
    func answerFromEachState(status: String, refusal: InvitationRefusal?) {
        let i = Self.invitation(status: status)
        #expect(InvitationMachine.answerRefusal(i, actor: Self.invitee, caller: Self.stranger) == refusal)
        let accepted = InvitationMachine.accept(i, actor: Self.invitee, caller: Self.stranger, facts: Self.premium, now: Self.now)
        if let refusal { #expect(accepted == .refuse(refusal)) } else { #expect(accepted == .finish(.init(to: .accepted, user: Self.invitee), addToGroup: nil)) }
    }

    @Test("an expired one refuses with its instant; found past its expiry while pending, it is marked expired first, then refused")
    func expiry() {
        let marked = Self.invitation(status: "expired", expiresIn: -10)
        #expect(InvitationMachine.answerRefusal(marked, actor: Self.invitee, caller: Self.stranger) == .expired(at: marked.expiresAt))
        let due = Self.invitation(expiresIn: 0)  // expiresAt == now: expired
        #expect(InvitationMachine.accept(due, actor: Self.invitee, caller: Self.stranger, facts: Self.premium, now: Self.now)
                == .expireThenRefuse(.init(to: .expired), .expired(at: due.expiresAt)))
        let justInTime = Self.invitation(expiresIn: 0.001)
        #expect(InvitationMachine.accept(justInTime, actor: Self.invitee, caller: Self.stranger, facts: Self.premium, now: Self.now)
                == .finish(.init(to: .accepted, user: Self.invitee), addToGroup: nil))
        // The sweeper: pending and due only.
        #expect(InvitationMachine.expire(due, now: Self.now) == .init(to: .expired))
        #expect(InvitationMachine.expire(justInTime, now: Self.now) == nil)
        #expect(InvitationMachine.expire(Self.invitation(status: "accepted", expiresIn: -10), now: Self.now) == nil)
        #expect(InvitationRefusal.expired(at: due.expiresAt).serviceError.code == .invitationExpired)
    }

    @Test("bound invitations: to a user id only that user; to an address only an account that proved it; never one's own")
    func whoMayAnswer() {
        let byId = Self.invitation(uid: Self.invitee)
        #expect(InvitationMachine.answerRefusal(byId, actor: Self.invitee, caller: Self.stranger) == nil)
        #expect(InvitationMachine.answerRefusal(byId, actor: "u-other", caller: Self.stranger) == .sentToSomeoneElse)
        let byAddress = Self.invitation(email: "Bo@Example.com")
        let bo = CallerAddress(email: "bo@example.com", proven: true)
        #expect(InvitationMachine.answerRefusal(byAddress, actor: Self.invitee, caller: bo) == nil)
        #expect(InvitationMachine.answerRefusal(byAddress, actor: Self.invitee, caller: CallerAddress(email: "bo@example.com", proven: false)) == .addressNotProven)
        #expect(InvitationMachine.answerRefusal(byAddress, actor: Self.invitee, caller: Self.stranger) == .sentToSomeoneElse)
        #expect(InvitationMachine.answerRefusal(byAddress, actor: Self.invitee, caller: CallerAddress(email: nil, proven: true)) == .sentToSomeoneElse)
        // A deleted invitee's address is emptied: nobody holds it.
        #expect(InvitationMachine.answerRefusal(Self.invitation(email: ""), actor: Self.invitee, caller: CallerAddress(email: "", proven: true)) == .sentToSomeoneElse)
        // An open link: anyone but its inviter.
        #expect(InvitationMachine.answerRefusal(Self.invitation(), actor: Self.inviter, caller: Self.stranger) == .ownInvitation)
        #expect(InvitationMachine.answerRefusal(Self.invitation(), actor: "anyone", caller: CallerAddress(email: nil, proven: false)) == nil)
    }

    @Test("accepting checks the inviter's plan and the alarm's room as the facts say; a group acceptance adds the member first")
    func acceptFacts() {
        let alarm = Self.invitation()
        func accept(_ i: Invitation, _ facts: AcceptFacts) -> AnswerDecision {
            InvitationMachine.accept(i, actor: Self.invitee, caller: Self.stranger, facts: facts, now: Self.now)
        }
        #expect(accept(alarm, .init(inviterTier: .plus, alarmShares: 0)) == .refuse(.inviterNotPremium))
        #expect(accept(alarm, .init(inviterTier: .free, alarmShares: 0)) == .refuse(.inviterNotPremium))
        // An inviter this service does not know yet is not refused (the read model may lag).
        #expect(accept(alarm, .init(inviterTier: nil, alarmShares: 0)) == .finish(.init(to: .accepted, user: Self.invitee), addToGroup: nil))
        #expect(accept(alarm, .init(inviterTier: .premium, alarmShares: Alarm.maxSharedWith - 1))
                == .finish(.init(to: .accepted, user: Self.invitee), addToGroup: nil))
        #expect(accept(alarm, .init(inviterTier: .premium, alarmShares: Alarm.maxSharedWith)) == .refuse(.alarmFull(shares: Alarm.maxSharedWith)))
        // The share count says nothing of a group invitation, which is claimed first.
        let group = Self.invitation(.group)
        #expect(accept(group, .init(inviterTier: .premium, alarmShares: Alarm.maxSharedWith))
                == .claimThenAdd(AcceptClaim(by: Self.invitee, until: Self.now.addingTimeInterval(AcceptClaim.lease)), group: "ref-1"))
        // The order: who and which state before expiry, expiry before the plan.
        let expiredAndWrongPlan = Self.invitation(expiresIn: -1)
        #expect(accept(expiredAndWrongPlan, .init(inviterTier: .free, alarmShares: 0))
                == .expireThenRefuse(.init(to: .expired), .expired(at: expiredAndWrongPlan.expiresAt)))
        let acceptedAndExpired = Self.invitation(status: "accepted", expiresIn: -1)
        #expect(accept(acceptedAndExpired, Self.premium) == .refuse(.alreadyAccepted))
    }

    @Test("a group invitation is claimed, then spent by its claimant only while the claim holds and once it added the member", arguments: [
        // (claimant, claim ends in seconds, invitation expires in seconds, added by this acceptance, what accepting answers)
        (nil as String?, 0.0, 3600.0, false, "claim"),
        ("u-invitee", 10.0, 3600.0, true, "finish"),
        ("u-invitee", 10.0, -5.0, true, "finish"),      // expired since the claim was written: the claim holds
        ("u-invitee", 10.0, 3600.0, false, "claim"),    // the caller's second request while its first adds: it adds too
        ("u-invitee", 10.0, -5.0, false, "claim"),
        ("u-other", 10.0, 3600.0, false, "beingAccepted"),
        ("u-other", 10.0, 3600.0, true, "beingAccepted"),
        ("u-other", 0.0, 3600.0, false, "claim"),       // a claim that lapsed holds nothing
        ("u-other", -1.0, 3600.0, false, "claim"),
        ("u-invitee", -1.0, -5.0, true, "finish"),      // added, its claim lapsed and the invitation expired since: spent
        ("u-invitee", -1.0, 3600.0, true, "finish"),
        (nil, 0.0, -5.0, true, "finish"),               // added, its claim cleared: spent all the same
        ("u-invitee", -1.0, -5.0, false, "expire"),     // the caller's own lapsed claim, nothing added: decided afresh
        ("u-other", 10.0, -5.0, false, "beingAccepted"),
    ] as [(String?, Double, Double, Bool, String)])
    func groupClaims(claimant: String?, claimEndsIn: Double, expiresIn: Double, added: Bool, answer: String) {
        let i = Self.invitation(.group, expiresIn: expiresIn)
        let claim = claimant.map { AcceptClaim(by: $0, until: Self.now.addingTimeInterval(claimEndsIn)) }
        let decision = InvitationMachine.accept(i, actor: Self.invitee, caller: Self.stranger,
                                                facts: AcceptFacts(inviterTier: .premium, alarmShares: nil, claim: claim, added: added), now: Self.now)
        switch (decision, answer) {
        case (.claimThenAdd(let c, let group), "claim"):
            #expect(c == AcceptClaim(by: Self.invitee, until: Self.now.addingTimeInterval(AcceptClaim.lease)) && group == "ref-1")
        case (.finish(let t, let group), "finish"):
            #expect(t == .init(to: .accepted, user: Self.invitee) && group == nil)
        case (.refuse(.beingAccepted), "beingAccepted"), (.expireThenRefuse, "expire"):
            break
        default:
            Issue.record("accepting answered \(decision), not \(answer)")
        }
        // An alarm invitation is never claimed.
        let alarm = Self.invitation(expiresIn: 3600)
        #expect(InvitationMachine.accept(alarm, actor: Self.invitee, caller: Self.stranger,
                                         facts: AcceptFacts(inviterTier: .premium, alarmShares: 0, claim: claim), now: Self.now)
                == .finish(.init(to: .accepted, user: Self.invitee), addToGroup: nil))
    }

    @Test("declining: a bound invitation only, by its invitee, while pending; expiry not asked")
    func decline() {
        let bound = Self.invitation(uid: Self.invitee, expiresIn: -5)
        #expect(InvitationMachine.decline(bound, actor: Self.invitee, caller: Self.stranger) == .finish(.init(to: .declined, user: Self.invitee), addToGroup: nil))
        #expect(InvitationMachine.decline(Self.invitation(), actor: Self.invitee, caller: Self.stranger) == .refuse(.linkCannotBeDeclined))
        #expect(InvitationMachine.decline(Self.invitation(status: "declined", uid: Self.invitee), actor: Self.invitee, caller: Self.stranger)
                == .refuse(.notPending(status: "declined")))
        #expect(InvitationMachine.decline(bound, actor: "u-other", caller: Self.stranger) == .refuse(.sentToSomeoneElse))
    }

    @Test("revoking: the inviter, while pending (anyone else: not found); a revoke for a cause takes pending ones only")
    func revoke() {
        #expect(InvitationMachine.revoke(Self.invitation(), actor: Self.inviter) == .success(.init(to: .revoked, reason: .inviter)))
        #expect(InvitationMachine.revoke(Self.invitation(), actor: Self.invitee) == .failure(.notFound))
        #expect(InvitationMachine.revoke(Self.invitation(status: "accepted"), actor: Self.inviter) == .failure(.alreadyFinished(status: "accepted")))
        #expect(InvitationMachine.revoke(Self.invitation(), because: .alarmDeleted) == .init(to: .revoked, reason: .alarmDeleted))
        #expect(InvitationMachine.revoke(Self.invitation(status: "expired"), because: .alarmDeleted) == nil)
        #expect(RevokeReason.accountTakenBack.rawValue == "account taken back")
    }

    @Test("each transition is announced by its own event")
    func events() {
        #expect(InvitationTransition(to: .accepted).event == InvitationsEvents.accepted)
        #expect(InvitationTransition(to: .declined).event == InvitationsEvents.declined)
        #expect(InvitationTransition(to: .revoked).event == InvitationsEvents.revoked)
        #expect(InvitationTransition(to: .expired).event == InvitationsEvents.expired)
    }

    @Test("who sees what: whole to inviter, invitee and group managers; an open link redacted to anyone; a bound one not found")
    func view() {
        let accepted = Self.invitation(status: "accepted")
        #expect(InvitationMachine.view(accepted, actor: Self.inviter, caller: Self.stranger) == .whole)
        guard case .openLink(let open) = InvitationMachine.view(accepted, actor: "anyone", caller: Self.stranger) else {
            Issue.record("an open link was not shown redacted"); return
        }
        #expect(open.acceptedBy == nil && open.acceptedAt == nil && open.referenceName == "Rent")
        let byAddress = Self.invitation(email: "bo@example.com")
        #expect(InvitationMachine.view(byAddress, actor: Self.invitee, caller: CallerAddress(email: "bo@example.com", proven: true)) == .whole)
        #expect(InvitationMachine.view(byAddress, actor: Self.invitee, caller: CallerAddress(email: "bo@example.com", proven: false)) == .refuse(.addressNotProven))
        #expect(InvitationMachine.view(byAddress, actor: "anyone", caller: Self.stranger) == .refuse(.notFound))
        #expect(InvitationMachine.view(Self.invitation(uid: Self.invitee), actor: Self.invitee, caller: Self.stranger) == .whole)
        // A group's: the role is asked only when it decides.
        let group = Self.invitation(.group, uid: Self.invitee)
        #expect(InvitationMachine.view(group, actor: "admin", caller: Self.stranger) == .needsGroupRole)
        #expect(InvitationMachine.view(group, actor: "admin", caller: Self.stranger, managesGroup: true) == .whole)
        #expect(InvitationMachine.view(group, actor: "member", caller: Self.stranger, managesGroup: false) == .refuse(.notFound))
        #expect(InvitationMachine.view(group, actor: Self.inviter, caller: Self.stranger) == .whole)
    }

    @Test("the create checks: kind, reference, one invitee, never oneself; the address follows sign-up's rule")
    func validate() throws {
        func v(_ type: String = "alarm", ref: String = "ref-1", email: String? = nil, uid: String? = nil, caller: String? = "me@example.com") throws -> NewInvitation {
            try InvitationMachine.validate(type: type, referenceId: ref, inviteeEmail: email, inviteeUserId: uid, actor: "u-me", callerEmail: caller)
        }
        #expect(try v(email: " Bo@Example.COM ").inviteeEmail == "bo@example.com")
        #expect(try v("group", uid: "u-2").kind == .group)
        for bad in [{ try v("calendar") }, { try v(ref: "") }, { try v(ref: String(repeating: "r", count: 65)) },
                    { try v(email: "me@example.com") }, { try v(uid: "u-me") }, { try v(email: "a@b.co", uid: "u-2") },
                    { try v(uid: "") }, { try v(email: "bo@localhost") }, { try v(email: "bo@exa mple.com") },
                    { try v(email: "bo@example.c0m") }, { try v(email: "b\u{202E}o@example.com") }] as [() throws -> NewInvitation] {
            #expect(throws: ServiceError.self) { try bad() }
        }
        // What the old invitation-only rule took and sign-up refuses: no longer invitable.
        #expect(throws: ServiceError.self) { try v(email: "bo@example.x") }
    }

    @Test("the hourly limit: refused from the limit on, retry when the oldest leaves the hour")
    func rate() throws {
        #expect(InvitationMachine.rateRefusal(count: 9, oldest: Self.now, perHour: 10, now: Self.now) == nil)
        let refusal = try #require(InvitationMachine.rateRefusal(count: 10, oldest: Self.now.addingTimeInterval(-3000), perHour: 10, now: Self.now))
        #expect(refusal.code == .rateLimited)
        #expect(refusal.details?["retryAfterSeconds"] == .number(600))
        #expect(InvitationMachine.rateRefusal(count: 10, oldest: Self.now.addingTimeInterval(-3599.5), perHour: 10, now: Self.now)?.details?["retryAfterSeconds"] == .number(1))
    }

    @Test("status words round-trip; an unknown one is kept and final")
    func words() {
        for word in ["pending", "accepted", "declined", "revoked", "expired", "on-hold"] {
            #expect(InvitationStatus(word).rawValue == word)
        }
        #expect(InvitationStatus("on-hold") == .unknown("on-hold"))
        #expect(Self.invitation(status: "on-hold").state == .unknown("on-hold"))
        #expect(Self.invitation(.group).kind == .group)
    }
}
