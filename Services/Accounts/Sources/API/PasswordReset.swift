import Contracts
import Foundation
import Messaging
import PostgresNIO

extension AccountsHandlers {
    /// Queues a reset mail when `email` belongs to an account; the answer is the same either way,
    /// so the route does not tell who has an account.
    func requestPasswordReset(_ request: PasswordResetRequest) async throws -> Empty {
        let key = request.email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard !key.isEmpty, key.count <= 254 else { throw ServiceError(.validationFailed, "email must be 1 to 254 characters") }
        try await database.transaction { c in
            let rows = try await c.query("SELECT id, email, display_name FROM users WHERE email_key = \(key) AND email <> ''",
                                         logger: database.logger)
            for try await (uid, email, name) in rows.decode((String, String, String).self) {
                try await mails.send(.reset, uid: uid, email: email, name: name, on: c, logger: database.logger)
            }
        }
        return Empty()
    }

    /// Sets the password from a reset token (single use, unexpired) and ends every session.
    func confirmPasswordReset(_ request: PasswordResetConfirmation) async throws -> Empty {
        try AccountValidation.password(request.password)
        let hash = try await hasher.hash(request.password)
        try await outbox.transaction { c in
            guard let (uid, _) = try await AccountMails.consume(request.token, .reset, on: c, logger: database.logger) else {
                throw ServiceError(.validationFailed, "token is not a valid reset token (unknown, used or expired)")
            }
            try await c.query("UPDATE users SET password_hash = \(hash), updated_at = now() WHERE id = \(uid)", logger: database.logger)
            // Other reset links of the account stop working too.
            try await c.query("UPDATE email_tokens SET used_at = now() WHERE user_id = \(uid) AND purpose = 'reset' AND used_at IS NULL",
                              logger: database.logger)
            let sessions = try await c.query("""
                UPDATE sessions SET revoked_at = now(), revoke_reason = 'password reset' WHERE user_id = \(uid) AND revoked_at IS NULL RETURNING id
                """, logger: database.logger).all(String.self)
            for s in sessions {
                try await outbox.append(AccountsEvents.sessionRevoked, AccountsEvents.SessionRevoked(uid: uid, session: s), actor: uid, on: c)
            }
            try await c.query("DELETE FROM refresh_tokens WHERE user_id = \(uid)", logger: database.logger)
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
            let rows = try await c.query("""
                UPDATE users SET email_verified_at = now(), updated_at = now() WHERE id = \(uid) AND email = \(email) RETURNING id
                """, logger: database.logger)
            guard try await rows.first(String.self) != nil else {
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
