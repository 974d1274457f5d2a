import Contracts
import Foundation
import Messaging
import PostgresNIO

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
                let dropped = try await store.deleteIdentities(of: uid, on: c)
                if dropped > 0 {
                    database.logger.notice("reset proved an unproven address: identities linked before were removed",
                                           metadata: ["user": "\(uid)", "identities": "\(dropped)"])
                }
                if let user = try await store.user(id: uid, on: c) {
                    try await outbox.append(AccountsEvents.userUpserted, upserted(user), actor: uid, on: c)
                }
            }
        }
        return Empty()
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

    /// Marks the email verified, if it is still the one the mail went to.
    func confirmVerification(_ request: EmailVerificationConfirmation) async throws -> Empty {
        let user: User = try await outbox.transaction { c in
            guard let (uid, email) = try await AccountMails.consume(request.token, .verify, on: c, logger: database.logger) else {
                throw ServiceError(.validationFailed, "token is not a valid verification token (unknown, used or expired)")
            }
            guard try await store.markEmailVerified(of: uid, email: email, on: c) else {
                throw ServiceError(.validationFailed, "the account's email changed since this mail was sent")
            }
            guard let user = try await store.user(id: uid, on: c) else { throw ServiceError(.authRequired, "this account no longer exists") }
            try await outbox.append(AccountsEvents.userUpserted, upserted(user), actor: uid, on: c)
            return user
        }
        _ = user
        return Empty()
    }
}
