import AccountsCore
import Contracts
import Foundation
import Messaging
import PostgresNIO
import ServiceKit

extension AccountsHandlers {
    /// Queues a reset mail when `email` belongs to an account; the answer is the same either way,
    /// so the route does not tell who has an account.
    func requestPasswordReset(_ request: PasswordResetRequest) async throws -> Empty {
        let key = EmailKey.normalize(request.email)
        // Counted as JSON Schema counts (code points), before and after normalising.
        guard !key.isEmpty, request.email.unicodeScalars.count <= 254, key.unicodeScalars.count <= 254 else {
            throw ServiceError(.validationFailed, "email must be 1 to 254 characters")
        }
        try await database.transaction { c in
            for (uid, email, name) in try await store.resetRecipients(emailKey: key, on: c) {
                try await mails.send(.reset, uid: uid, email: email, name: name, on: c, logger: database.logger)
            }
        }
        return Empty()
    }

    /// Sets the password from a reset token (single use, unexpired) and ends every session.
    ///
    /// The token is looked up (one hash, one indexed read) before the password is hashed, so a
    /// flood of made-up tokens costs no scrypt time. Answering the mail proves the address: an
    /// account that had not proved it before drops the Apple/Google identities linked to it
    /// (linked by whoever held it unproven — a pre-hijack) along with its sessions.
    func confirmPasswordReset(_ request: PasswordResetConfirmation) async throws -> Empty {
        try AccountValidation.password(request.password)
        guard try await AccountMails.isLive(request.token, .reset, database: database) else {
            throw ServiceError(.validationFailed, "token is not a valid reset token (unknown, used or expired)")
        }
        let hash = try await hasher.hash(request.password)
        try await outbox.transaction { c in
            guard let (uid, email) = try await AccountMails.consume(request.token, .reset, on: c, logger: database.logger) else {
                throw ServiceError(.validationFailed, "token is not a valid reset token (unknown, used or expired)")
            }
            let before = try await store.user(id: uid, on: c)
            try await store.setPasswordHash(hash, of: uid, on: c)
            // Other reset links of the account stop working too.
            try await store.invalidateResetTokens(of: uid, on: c)
            let sessions = try await store.revokeSessionsOnPasswordReset(of: uid, on: c)
            for s in sessions {
                try await outbox.append(AccountsEvents.sessionRevoked, AccountsEvents.SessionRevoked(uid: uid, session: s), actor: uid, on: c)
            }
            try await store.deleteRefreshTokens(of: uid, on: c)
            if let before, before.emailVerifiedAt == nil, try await store.markEmailVerified(of: uid, email: email, on: c) {
                try await takeBack(uid, email: email, name: before.displayName, sessions: sessions.count, on: c)
            }
        }
        return Empty()
    }

    /// A reset proved the address of an account that had not proved it: whoever held the account
    /// unproven (a pre-hijack) loses everything they made in it. Identities and devices (push
    /// tokens, webhooks) go here, each device announced as removed; the profile goes out with
    /// `takenBackAt`, on which alarms removes the calendar feeds and invitations revokes the
    /// pending invitations made before it. The owner is mailed what was removed.
    func takeBack(_ uid: String, email: String, name: String, sessions: Int, on c: PostgresConnection) async throws {
        let identities = try await store.deleteIdentities(of: uid, on: c)
        let devices = try await store.deleteDevices(of: uid, on: c)
        for d in devices {
            try await outbox.append(AccountsEvents.deviceRemoved, AccountsEvents.DeviceRemoved(uid: uid, deviceId: d.deviceId), actor: uid, on: c)
        }
        database.logger.notice("reset proved an unproven address: what was made before is removed",
                               metadata: ["user": "\(uid)", "identities": "\(identities)", "devices": "\(devices.count)", "sessions": "\(sessions)"])
        if let user = try await store.user(id: uid, on: c) {
            var event = upserted(user)
            event.takenBackAt = Date()
            try await outbox.append(AccountsEvents.userUpserted, event, actor: uid, on: c)
        }
        let listed = devices.isEmpty ? "- no devices" : devices.map { "- device \($0.deviceId) (\($0.platform))" }.joined(separator: "\n")
        let body = """
            Hello \(name),

            You reset the password of your Chronir account, which proves this address is yours.
            Before that, the account had not proved its address, so anything made in it may have
            been made by someone else. We removed, to be safe:

            \(listed)
            - \(identities) Apple or Google sign-in(s) linked to it
            - \(sessions) signed-in session(s)
            - every calendar feed link and every pending invitation made before the reset

            Sign in again on your own devices to register them; make a new calendar feed link if
            you want one.
            """
        try await MailOutbox.enqueue(to: email, subject: "What we removed from your Chronir account", body: body, userId: uid,
                                     on: c, logger: database.logger)
    }

    /// Queues a verification mail to the actor's email.
    func requestVerification(_ actor: String) async throws -> Empty {
        try await database.transaction { c in
            guard let user = try await store.user(id: actor, on: c) else { throw ServiceError(.authRequired, "this account no longer exists") }
            guard !user.email.isEmpty else { throw ServiceError(.validationFailed, "this account has no email to verify; link one first") }
            try await mails.send(.verify, uid: actor, email: user.email, name: user.displayName, on: c, logger: database.logger)
        }
        return Empty()
    }

    /// Marks the email verified, if it is still the one the mail went to, and only inside the
    /// account that asked for the mail: `actor` must be that account.
    ///
    /// A verification mail goes to an address nobody proved yet. Whoever opens its link is the
    /// address's owner, but not necessarily the account's: an attacker may have signed up with
    /// the victim's address and asked for the mail (a pre-hijack). Confirming on open, signed in
    /// to nothing, would hand the attacker an account holding a proven copy of the victim's
    /// address (the victim's Apple/Google sign-in would then join it, invitations to the address
    /// would reach it). So the link confirms only for the signed-in account it was sent for; the
    /// owner of the address who did not make the account takes it back with a password reset,
    /// which proves the address and removes what was made before (``takeBack``).
    func confirmVerification(_ request: EmailVerificationConfirmation, actor: String?) async throws -> Empty {
        guard let actor, !actor.isEmpty else {
            throw ServiceError(.authRequired, """
                sign in to the account this mail was sent for, then open the link again: it confirms the address only \
                inside that account. If you did not make a Chronir account, ignore the mail
                """)
        }
        try await outbox.transaction { c in
            guard let (uid, email) = try await AccountMails.consume(request.token, .verify, on: c, logger: database.logger) else {
                throw ServiceError(.validationFailed, "token is not a valid verification token (unknown, used or expired)")
            }
            // Thrown inside the transaction: the token is not used up.
            guard uid == actor else {
                database.logger.notice("verification link opened in another account", metadata: ["user": "\(actor)", "for": "\(uid)"])
                throw ServiceError(.permissionDenied, "this link confirms the address of another account: sign in to the account the mail was sent for")
            }
            guard try await store.markEmailVerified(of: uid, email: email, on: c) else {
                throw ServiceError(.validationFailed, "the account's email changed since this mail was sent")
            }
            guard let user = try await store.user(id: uid, on: c) else { throw ServiceError(.authRequired, "this account no longer exists") }
            try await outbox.append(AccountsEvents.userUpserted, upserted(user), actor: uid, on: c)
        }
        return Empty()
    }
}
