import Contracts
import Crypto
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

    static let notFound = ServiceError(.notFound, "no such invitation")

    static func email(_ ctx: RPCContext) -> String? { ctx.envelope.headers[AuthHeaders.email].map { EmailKey.normalize($0) } }

    /// The caller's address as the gateway forwarded it from the access token, and whether the
    /// account proved it (a verification mail answered, or asserted by Apple/Google).
    struct CallerAddress: Sendable {
        var email: String?
        var proven: Bool

        /// Whether `invitee` (an invitation's address) is this caller's address; an empty one
        /// (a deleted invitee's) is nobody's.
        func holds(_ invitee: String) -> Bool {
            guard let email, !email.isEmpty, !invitee.isEmpty else { return false }
            return EmailKey.normalize(invitee) == email
        }
    }

    static func address(_ ctx: RPCContext) -> CallerAddress {
        CallerAddress(email: email(ctx), proven: ctx.envelope.headers[AuthHeaders.emailVerified] == "1")
    }

    static func unproven() -> ServiceError {
        ServiceError(.emailNotVerified, """
            this invitation was sent to your address, which this account has not proved yet: open the link of the \
            verification mail (POST /v1/me/email-verification sends one), sign in again, then answer it
            """)
    }

    /// 128 random bits, URL-safe base64 without padding (22 characters).
    static func newCode() -> String {
        let key = SymmetricKey(size: .bits128)
        let bytes = key.withUnsafeBytes { Data($0) }
        return bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    func create(_ req: InvitationsMethods.Create.Request, actor: String, ctx: RPCContext) async throws -> Invitation {
        guard req.type == "alarm" || req.type == "group" else { throw ServiceError(.validationFailed, "type must be alarm or group") }
        guard !req.referenceId.isEmpty else { throw ServiceError(.validationFailed, "referenceId is required") }
        let email = try req.inviteeEmail.map { e -> String in
            let t = EmailKey.normalize(e)
            try HumanText.check(t, field: "inviteeEmail")
            guard t.count <= 254, t.range(of: #"^[^@\s]+@[^@\s]+\.[^@\s]+$"#, options: .regularExpression) != nil else {
                throw ServiceError(.validationFailed, "inviteeEmail is not an email address")
            }
            return t
        }
        if let email, email == Self.email(ctx) { throw ServiceError(.validationFailed, "you cannot invite yourself") }
        if let uid = req.inviteeUserId {
            guard email == nil else { throw ServiceError(.validationFailed, "give inviteeEmail or inviteeUserId, not both") }
            guard !uid.isEmpty, uid.count <= 64 else { throw ServiceError(.validationFailed, "inviteeUserId must be a user id") }
            guard uid != actor else { throw ServiceError(.validationFailed, "you cannot invite yourself") }
        }
        // The tier as accounts knows it now (not a read model that may lag an upgrade).
        let inviter = try await accounts.call(AccountsMethods.GetMe.self, Empty(), actor: actor, headers: ctx.envelope.headers)
        guard inviter.tier == .premium else { throw ServiceError(.tierRequired, "sharing needs Premium") }
        // Whether the inviter may share this: asked of the owners of the data.
        let referenceName: String
        switch req.type {
        case "alarm":
            let alarm = try await alarms.call(AlarmsMethods.Get.self, .init(id: req.referenceId), actor: actor, headers: ctx.envelope.headers)
            guard alarm.ownerId == actor else { throw ServiceError(.permissionDenied, "only the owner shares alarm \(alarm.id)") }
            referenceName = alarm.title
        default:
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
            let recent = try await store.recentInvitations(by: actor, on: c)
            for (count, oldest) in recent where count >= perHour {
                let retry = max(1, Int(((oldest ?? Date()).timeIntervalSinceNow + 3600).rounded(.up)))
                throw ServiceError(.rateLimited, "at most \(perHour) invitations per hour",
                                   details: .object(["retryAfterSeconds": .number(Double(retry))]))
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
        if i.inviterId == actor || i.inviteeUserId == actor { return i }
        if let invitee = i.inviteeEmail, caller.holds(invitee) {
            guard caller.proven else { throw Self.unproven() }
            return i
        }
        if i.type == "group",
           let role = try await accounts.call(GroupMethods.Membership.self, .init(groupId: i.referenceId, uid: actor)).role, role.manages {
            return i
        }
        guard i.inviteeEmail == nil, i.inviteeUserId == nil else { throw Self.notFound }
        var open = i
        open.acceptedBy = nil
        open.acceptedAt = nil
        return open
    }

    /// The invitation if it can still be answered by `actor`; an expired one is marked so first.
    /// One bound to an address is answered only by an account that proved that address.
    func pending(_ code: String, actor: String, caller: CallerAddress, on c: PostgresConnection) async throws -> Invitation {
        guard let i = try await store.lock(code, on: c) else { throw Self.notFound }
        if let invitee = i.inviteeUserId, invitee != actor {
            throw ServiceError(.permissionDenied, "this invitation was sent to someone else")
        }
        if let invitee = i.inviteeEmail {
            guard caller.holds(invitee) else { throw ServiceError(.permissionDenied, "this invitation was sent to someone else") }
            guard caller.proven else { throw Self.unproven() }
        }
        switch i.status {
        case "pending": break
        case "accepted": throw ServiceError(.invitationAlreadyAccepted, "this invitation was already accepted")
        case "expired": throw ServiceError(.invitationExpired, "this invitation expired on \(ISOTime.format(i.expiresAt))")
        default: throw ServiceError(.invitationNotPending, "this invitation was \(i.status)")
        }
        guard i.inviterId != actor else { throw ServiceError(.validationFailed, "you cannot answer your own invitation") }
        return i
    }

    func accept(_ code: String, actor: String, caller: CallerAddress) async throws -> Invitation {
        // What made the invitation possible is asked again now: the inviter may have lost the
        // role, the plan or the data since (the row is re-read under its lock below).
        if let i = try await store.invitation(code), i.status == "pending", i.inviterId != actor { try await inviterStillManages(i) }
        // An invitation found expired is marked so (and announced) in a transaction that
        // commits; the refusal is thrown after. (Thrown inside, it rolled the mark back.)
        let outcome: AcceptOutcome = try await store.outbox.transaction { c in
            let i = try await pending(code, actor: actor, caller: caller, on: c)
            if i.expiresAt <= Date() {
                _ = try await store.finish(i, status: "expired", event: InvitationsEvents.expired, user: nil, userName: nil, reason: nil, on: c)
                return .expired(at: i.expiresAt)
            }
            try await inviterStillPremium(i, on: c)
            if i.type == "alarm", let shared = try await store.alarmShares(i.referenceId, on: c), shared >= Alarm.maxSharedWith {
                throw ServiceError(.groupMemberLimit, "this alarm is already shared with \(shared) people, the most it may be; ask its owner to make room")
            }
            if i.type == "group" {
                // The member limit is checked where members live, before the invitation is spent.
                _ = try await accounts.call(GroupMethods.AddMember.self, .init(groupId: i.referenceId, uid: actor, invitedBy: i.inviterId))
            }
            let name = try await store.user(actor, on: c)?.name
            return .accepted(try await store.finish(i, status: "accepted", event: InvitationsEvents.accepted, user: actor, userName: name, reason: nil, on: c))
        }
        switch outcome {
        case .accepted(let invitation): return invitation
        case .expired(let at): throw ServiceError(.invitationExpired, "this invitation expired on \(ISOTime.format(at))")
        }
    }

    /// Throws unless the manager who made group invitation `i` still manages the group
    /// (`CA007`), asked of accounts, which the accept needs anyway (it adds the member there).
    func inviterStillManages(_ i: Invitation) async throws {
        guard i.type == "group" else { return }
        let m = try await accounts.call(GroupMethods.Membership.self, .init(groupId: i.referenceId, uid: i.inviterId))
        guard m.role?.manages == true else {
            throw ServiceError(.permissionDenied, "the person who invited you no longer manages group \(m.group.name); ask its owner for a new invitation")
        }
    }

    /// Throws `CA002` when the inviter of `i` is known here (the accounts stream's read model)
    /// and no longer Premium: sharing needs the plan it needed when the invitation was made.
    /// Read locally, so accepting an alarm invitation does not wait on another service.
    func inviterStillPremium(_ i: Invitation, on c: PostgresConnection) async throws {
        if let inviter = try await store.user(i.inviterId, on: c), inviter.tier != .premium {
            throw ServiceError(.tierRequired, "the plan of the person who invited you no longer includes sharing; ask them for a new invitation")
        }
    }

    /// What accepting did: accepted, or found the invitation expired (and marked it).
    enum AcceptOutcome: Sendable {
        case accepted(Invitation)
        case expired(at: Date)
    }

    func decline(_ code: String, actor: String, caller: CallerAddress) async throws -> Invitation {
        let result: Invitation = try await store.outbox.transaction { c in
            let i = try await pending(code, actor: actor, caller: caller, on: c)
            guard i.inviteeEmail != nil || i.inviteeUserId != nil else {
                throw ServiceError(.validationFailed, "a link invitation cannot be declined; just do not accept it")
            }
            let name = try await store.user(actor, on: c)?.name
            return try await store.finish(i, status: "declined", event: InvitationsEvents.declined, user: actor, userName: name, reason: nil, on: c)
        }
        return result
    }

    func revoke(_ code: String, actor: String) async throws -> Invitation {
        let result: Invitation = try await store.outbox.transaction { c in
            guard let i = try await store.lock(code, on: c), i.inviterId == actor else { throw Self.notFound }
            guard i.status == "pending" else { throw ServiceError(.invitationNotPending, "this invitation was already \(i.status)") }
            return try await store.finish(i, status: "revoked", event: InvitationsEvents.revoked, user: nil, userName: nil, reason: "inviter", on: c)
        }
        return result
    }
}
