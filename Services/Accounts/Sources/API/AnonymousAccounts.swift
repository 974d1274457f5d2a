import AccountsCore
import Contracts
import Foundation
import Messaging
import PostgresNIO

extension AccountsHandlers {
    /// An account with no credentials: no email, no password, signed in by its refresh token
    /// alone until ``link(_:actor:)`` attaches credentials. Its email key (`anonymous:<uid>`)
    /// marks it; store purchases need a linked account (the gateway refuses them without an email).
    func anonymousSignup(_ request: AnonymousSignupRequest) async throws -> AuthResult {
        let name = try request.displayName.map { try AccountValidation.displayName($0) } ?? "Chronir user"
        var settings = UserSettings()
        if let zone = request.timezone {
            try AccountValidation.timezone(zone, field: "timezone")
            settings.timezone = zone
        }
        let id = UUIDv7.string()
        let (user, session, refresh): (User, String, String) = try await outbox.transaction { [settings] c in
            guard let user = try await store.insertUser(id: id, email: "", emailKey: "anonymous:\(id)", passwordHash: "", displayName: name,
                                                        settings: settings, platform: nil, on: c) else {
                throw ServiceError(.internalError, "could not create the account")
            }
            let (session, refresh) = try await store.startSession(userID: id, refreshTTL: refreshTTL, on: c)
            try await outbox.append(AccountsEvents.userUpserted, upserted(user), actor: id, on: c)
            return (user, session, refresh)
        }
        return try await result(user, session: session, refresh: refresh)
    }

    /// Attaches an email and password, or an Apple or Google identity, to the actor's account:
    /// same uid, same data. An email (or identity) another account holds is `CA018`; an account
    /// that already has a password cannot take another one here.
    func link(_ request: LinkRequest, actor: String) async throws -> User {
        if let provider = request.provider {
            guard let token = request.identityToken, !token.isEmpty else {
                throw ServiceError(.validationFailed, "identityToken is required with provider")
            }
            let identity = try await identities.verify(token, provider: provider, nonce: request.nonce)
            return try await changed(actor) { c in
                if let owner = try await store.identityOwner(issuer: identity.issuer, subject: identity.subject, on: c) {
                    guard owner == actor else { throw ServiceError(.alreadyExists, "this \(provider) identity belongs to another account") }
                    return
                }
                try await store.insertIdentity(identity, for: actor, on: c)
                // An account without an email takes the identity's, when verified and free.
                if let email = identity.email, identity.emailVerified {
                    try await store.adoptIdentityEmail(email, for: actor, on: c)
                    // The provider asserted the address the account already has: proven.
                    if let user = try await store.user(id: actor, on: c), user.emailVerifiedAt == nil, !user.email.isEmpty,
                       EmailKey.normalize(user.email) == EmailKey.normalize(email) {
                        _ = try await store.markEmailVerified(of: actor, email: user.email, on: c)
                    }
                }
            }
        }
        guard let rawEmail = request.email, let password = request.password else {
            throw ServiceError(.validationFailed, "link needs email and password, or provider and identityToken")
        }
        let email = try AccountValidation.email(rawEmail)
        try AccountValidation.password(password)
        // The cheap refusals first (two indexed reads), so a request that cannot succeed costs
        // no scrypt time; the transaction below checks both again under the row lock.
        guard let current = try await store.passwordHash(of: actor) else { throw ServiceError(.authRequired, "this account no longer exists") }
        guard current.isEmpty else { throw ServiceError(.alreadyExists, "this account already has a password") }
        if let holder = try await store.credentials(email: email), holder.id != actor {
            throw ServiceError(.alreadyExists, "an account with this email already exists")
        }
        let hash = try await hasher.hash(password)
        return try await changed(actor) { c in
            let current = try await store.lockPasswordHash(of: actor, on: c)
            guard let current else { throw ServiceError(.authRequired, "this account no longer exists") }
            guard current.isEmpty else { throw ServiceError(.alreadyExists, "this account already has a password") }
            guard try await store.setCredentials(email: email, passwordHash: hash, of: actor, on: c) else {
                throw ServiceError(.alreadyExists, "an account with this email already exists")
            }
        }
    }

    /// Sets `migratedAt` the first time the actor's local alarms were imported.
    func markMigrated(_ actor: String) async throws -> User {
        try await changed(actor) { c in
            try await store.markMigrated(actor, on: c)
        }
    }

    /// Runs `change` on the actor's row and publishes the profile as it is then.
    private func changed(_ actor: String, _ change: @escaping @Sendable (PostgresConnection) async throws -> Void) async throws -> User {
        let user: User = try await outbox.transaction { c in
            try await change(c)
            guard let user = try await store.user(id: actor, on: c) else { throw ServiceError(.authRequired, "this account no longer exists") }
            try await outbox.append(AccountsEvents.userUpserted, upserted(user), actor: actor, on: c)
            return user
        }
        return user
    }
}
