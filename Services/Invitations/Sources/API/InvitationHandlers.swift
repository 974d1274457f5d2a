import Contracts
import InvitationsCore
import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO

/// Invitations (`chronir-api.md` §6, §11): Premium inviters (`CA002`), 10 per hour (`CA019`,
/// HTTP 429), 7-day expiry (`CA004`), accept once (`CA005`); an alarm invitation comes from the
/// alarm's owner, a group invitation from the group's owner or an admin.
struct InvitationHandlers: Sendable {
    let store: InvitationStore
    let accounts: RPCClient
    let alarms: RPCClient
    let lifetime: Duration
    let perHour: Int
    /// The mail to an address no account has proved (`chronir-api.md` §6.1 step 3).
    let mails: InvitationMails

    func register(into router: inout RPCRouter) {
        router.on(InvitationsMethods.Create.self) { req, ctx in try await create(req, actor: try ctx.requireActor(), ctx: ctx) }
        router.on(InvitationsMethods.List.self) { req, ctx in try await list(req.role, actor: try ctx.requireActor(), caller: Self.address(ctx)) }
        router.on(InvitationsMethods.Get.self) { req, ctx in
            try await view(req.code, actor: try ctx.requireActor(), caller: Self.address(ctx), headers: ctx.envelope.headers)
        }
        router.on(InvitationsMethods.Accept.self) { req, ctx in try await accept(req.code, actor: try ctx.requireActor(), caller: Self.address(ctx)) }
        router.on(InvitationsMethods.Decline.self) { req, ctx in try await decline(req.code, actor: try ctx.requireActor(), caller: Self.address(ctx)) }
        router.on(InvitationsMethods.Revoke.self) { req, ctx in try await revoke(req.code, actor: try ctx.requireActor()) }
    }

    static let notFound = InvitationRefusal.notFound.serviceError

    static func email(_ ctx: RPCContext) -> String? { ctx.envelope.headers[AuthHeaders.email].map { EmailKey.normalize($0) } }

    static func address(_ ctx: RPCContext) -> CallerAddress {
        CallerAddress(email: email(ctx), proven: ctx.envelope.headers[AuthHeaders.emailVerified] == "1")
    }

    /// 128 random bits, URL-safe base64 without padding (22 characters).
    static func newCode() -> String {
        Data.secureRandom(count: 16).base64URLEncodedString()
    }

    func create(_ req: InvitationsMethods.Create.Request, actor: String, ctx: RPCContext) async throws -> Invitation {
        let new = try InvitationMachine.validate(type: req.type, referenceId: req.referenceId, inviteeEmail: req.inviteeEmail,
                                                 inviteeUserId: req.inviteeUserId, actor: actor, callerEmail: Self.email(ctx))
        let email = new.inviteeEmail
        // The tier as accounts knows it now (not a read model that may lag an upgrade).
        let inviter = try await accounts.call(AccountsMethods.GetMe.self, Empty(), actor: actor, headers: ctx.envelope.headers)
        guard inviter.tier == .premium else { throw ServiceError(.tierRequired, "sharing needs Premium") }
        // Whether the inviter may share this: asked of the owners of the data.
        let referenceName: String
        switch new.kind {
        case .alarm:
            let alarm = try await alarms.call(AlarmsMethods.Get.self, .init(id: req.referenceId), actor: actor, headers: ctx.envelope.headers)
            guard alarm.ownerId == actor else { throw ServiceError(.permissionDenied, "only the owner shares alarm \(alarm.id)") }
            referenceName = alarm.title
        case .group:
            let m = try await accounts.call(GroupMethods.Membership.self, .init(groupId: req.referenceId, uid: actor))
            guard let role = m.role else { throw ServiceError(.notFound, "no group \(req.referenceId)") }
            guard role.manages else {
                throw ServiceError(.permissionDenied, "only the owner or an admin invites to group \(m.group.name)")
            }
            guard m.group.memberCount < m.group.maxMembers else {
                throw ServiceError(.groupMemberLimit, "group \(m.group.name) already has \(m.group.maxMembers) members")
            }
            referenceName = m.group.name
        }
        let (invitation, invitee): (Invitation, String?) = try await store.outbox.transaction { c in
            try await store.lockInviter(actor, on: c)
            let now = Date()
            for (count, oldest) in try await store.recentInvitations(by: actor, on: c) {
                if let refusal = InvitationMachine.rateRefusal(count: count, oldest: oldest, perHour: perHour, now: now) { throw refusal }
            }
            if let uid = req.inviteeUserId {
                // An account the service knows (from the accounts stream); the same answer for an
                // unknown id as for a deleted one.
                guard try await store.user(uid, on: c) != nil else { throw ServiceError(.notFound, "no user \(uid)") }
            }
            let code = Self.newCode()
            guard let i = try await store.insert(code: code, type: req.type, referenceId: req.referenceId, referenceName: referenceName,
                                                 inviterId: actor, inviterDisplayName: inviter.displayName, inviteeEmail: email,
                                                 inviteeUserId: req.inviteeUserId, lifetime: lifetime, on: c)
            else { throw ServiceError(.internalError, "invitation not stored") }
            var invitee = req.inviteeUserId
            if let email {
                invitee = try await store.uid(forEmail: email, on: c)
                // No account proved this address: the invitation goes by mail (a push otherwise).
                if invitee == nil { try await mails.enqueue(i, to: email, on: c, logger: store.logger) }
            }
            _ = try await store.outbox.append(InvitationsEvents.created,
                                              InvitationsEvents.Changed(invitation: i, userId: invitee, userDisplayName: nil, reason: nil),
                                              actor: actor, on: c)
            return (i, invitee)
        }
        _ = invitee
        return invitation
    }

    func list(_ role: String, actor: String, caller: CallerAddress) async throws -> InvitationsMethods.List.Response {
        switch role {
        case "invitee":
            // Invitations to an address are listed only to an account that proved it; those to
            // the account itself always.
            let email = caller.email.flatMap { !$0.isEmpty && caller.proven ? $0 : nil }
            return .init(invitations: try await store.pendingInvitations(forEmail: email, uid: actor))
        case "inviter":
            return .init(invitations: try await store.invitations(byInviter: actor))
        default:
            throw ServiceError(.validationFailed, "role must be invitee or inviter")
        }
    }

    /// An invitation as `actor` may see it (`GET /v1/invitations/{code}`): whole to its inviter,
    /// to its invitee once they proved the address, and to the owner and admins of its group; an
    /// open link (no address) shows anyone else only what the accept screen needs. A direct
    /// invitation is not found for anyone else (its address, inviter and state are not theirs).
    func view(_ code: String, actor: String, caller: CallerAddress, headers: [String: String]) async throws -> Invitation {
        guard let i = try await store.invitation(code) else { throw Self.notFound }
        var answer = InvitationMachine.view(i, actor: actor, caller: caller)
        if answer == .needsGroupRole {
            let role = try await accounts.call(GroupMethods.Membership.self, .init(groupId: i.referenceId, uid: actor)).role
            answer = InvitationMachine.view(i, actor: actor, caller: caller, managesGroup: role?.manages == true)
        }
        switch answer {
        case .whole: return i
        case .openLink(let open): return open
        case .refuse(let refusal): throw refusal.serviceError
        case .needsGroupRole: throw ServiceError(.internalError, "the group role was asked and not used")
        }
    }

    func accept(_ code: String, actor: String, caller: CallerAddress) async throws -> Invitation {
        // What made the invitation possible is asked again now: the inviter may have lost the
        // role, the plan or the data since (the row is re-read under its lock below).
        if let i = try await store.invitation(code), i.state == .pending, i.inviterId != actor { try await inviterStillManages(i) }
        // A group invitation is claimed in a first transaction, the member added in accounts
        // (where the member limit is checked) outside any, and the invitation spent in a second
        // that finds the caller's claim (``AcceptClaim``): no call to another service under the
        // invitation's lock, and an open link still admits one acceptor at a time.
        var added = false
        for _ in 0..<2 {
            switch try await acceptOnce(code, actor: actor, caller: caller, added: added) {
            case .done(let outcome):
                return try outcome.mapError(\.serviceError).get()
            case .addMember(let group, let inviter, let claim):
                do {
                    _ = try await accounts.call(GroupMethods.AddMember.self, .init(groupId: group, uid: actor, invitedBy: inviter))
                } catch let e as ServiceError where [.groupMemberLimit, .notFound, .permissionDenied].contains(e.code) {
                    // Refused (the group is full or gone): this request's claim goes, so the link
                    // is free for someone else at once. A call that got no answer may still have
                    // added the member: its claim is left to lapse, and a retry adds and spends.
                    try? await store.outbox.transaction { c in try await store.setClaim(code, nil, clearing: claim, on: c) }
                    throw e
                }
                added = true
            }
        }
        throw ServiceError(.internalError, "invitation \(code) was claimed and not spent")
    }

    /// The end of one transaction of an acceptance: the outcome, or the member to add first.
    enum AcceptStep: Sendable {
        case done(Result<Invitation, InvitationRefusal>)
        case addMember(group: String, inviter: String, claim: AcceptClaim)
    }

    /// One transaction of an acceptance: lock, read the facts (the claim included, and whether
    /// this acceptance has `added` the member), ask the machine, perform its answer.
    private func acceptOnce(_ code: String, actor: String, caller: CallerAddress, added: Bool) async throws -> AcceptStep {
        // An invitation found expired is marked so (and announced) in a transaction that
        // commits; the refusal is thrown after. (Thrown inside, it rolled the mark back.)
        try await store.outbox.transaction { c in
            guard let i = try await store.lock(code, on: c) else { throw Self.notFound }
            // The facts the decision needs, read under the invitation's lock (the inviter's plan
            // from the accounts stream's read model, so accepting does not wait on another service).
            let facts = AcceptFacts(inviterTier: try await store.user(i.inviterId, on: c)?.tier,
                                    alarmShares: i.kind == .alarm ? try await store.alarmShares(i.referenceId, on: c) : nil,
                                    claim: i.kind == .group ? try await store.claim(code, on: c) : nil, added: added)
            // The database's clock, as the expiry sweeper's: claims are compared across replicas.
            let now = try await c.query("SELECT now()", logger: store.logger).first(Date.self) ?? Date()
            switch InvitationMachine.accept(i, actor: actor, caller: caller, facts: facts, now: now) {
            case .refuse(let refusal):
                throw refusal.serviceError
            case .expireThenRefuse(let transition, let refusal):
                _ = try await store.finish(i, transition, userName: nil, on: c)
                return .done(.failure(refusal))
            case .claimThenAdd(let claim, let group):
                try await store.setClaim(code, claim, on: c)
                return .addMember(group: group, inviter: i.inviterId, claim: claim)
            case .finish(let transition, _):
                let name = try await store.user(actor, on: c)?.name
                return .done(.success(try await store.finish(i, transition, userName: name, on: c)))
            }
        }
    }

    /// Throws unless the manager who made group invitation `i` still manages the group
    /// (`CA007`), asked of accounts, which the accept needs anyway (it adds the member there).
    func inviterStillManages(_ i: Invitation) async throws {
        guard i.kind == .group else { return }
        let m = try await accounts.call(GroupMethods.Membership.self, .init(groupId: i.referenceId, uid: i.inviterId))
        guard m.role?.manages == true else {
            throw ServiceError(.permissionDenied, "the person who invited you no longer manages group \(m.group.name); ask its owner for a new invitation")
        }
    }

    func decline(_ code: String, actor: String, caller: CallerAddress) async throws -> Invitation {
        try await store.outbox.transaction { c in
            guard let i = try await store.lock(code, on: c) else { throw Self.notFound }
            switch InvitationMachine.decline(i, actor: actor, caller: caller) {
            case .refuse(let refusal), .expireThenRefuse(_, let refusal):
                throw refusal.serviceError
            case .finish(let transition, _):
                let name = try await store.user(actor, on: c)?.name
                return try await store.finish(i, transition, userName: name, on: c)
            case .claimThenAdd:
                throw ServiceError(.internalError, "declining answered a claim")
            }
        }
    }

    func revoke(_ code: String, actor: String) async throws -> Invitation {
        try await store.outbox.transaction { c in
            guard let i = try await store.lock(code, on: c) else { throw Self.notFound }
            let transition = try InvitationMachine.revoke(i, actor: actor).mapError(\.serviceError).get()
            return try await store.finish(i, transition, userName: nil, on: c)
        }
    }
}
