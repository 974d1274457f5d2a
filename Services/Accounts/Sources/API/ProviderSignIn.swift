import AccountsCore
import Contracts
import Foundation
import Messaging
import PostgresNIO

extension AccountsHandlers {
    /// Sign in with Apple or Google. A provider identity (`iss`, `sub`) maps to one account: the
    /// one it was linked to; else the account holding the token's email when the provider says
    /// the email is verified *and* the account proved it too (it is linked then; an unproven one
    /// is `CA033`); else a new account without a password, its email proven when the provider
    /// asserted it.
    func providerSignIn(_ request: ProviderSignInRequest) async throws -> AuthResult {
        let identity = try await identities.verify(request.identityToken, provider: request.provider, nonce: request.nonce)
        let name = try request.displayName.map { try AccountValidation.displayName($0) }
        let (user, session, refresh, created): (User, String, String, Bool) = try await outbox.transaction(wakes: { $0.3 }) { c in
            if let uid = try await store.identityOwner(issuer: identity.issuer, subject: identity.subject, on: c),
               let user = try await store.user(id: uid, on: c) {
                let (session, refresh) = try await store.startSession(userID: uid, refreshTTL: refreshTTL, on: c)
                return (user, session, refresh, false)
            }
            let email = identity.email?.trimmingCharacters(in: .whitespaces) ?? ""
            // Joined by address only when both sides proved it: the provider asserts
            // `email_verified` and the account answered a verification mail (or was made by a
            // provider that asserted it). Otherwise whoever signed up first with the address,
            // unproven, would own the provider's user (pre-hijack).
            if !email.isEmpty, identity.emailVerified,
               let uid = try await store.userID(email: email, on: c),
               let user = try await store.user(id: uid, on: c) {
                guard user.emailVerifiedAt != nil, EmailKey.normalize(user.email) == EmailKey.normalize(email) else {
                    throw ServiceError(.accountExistsUnverified, """
                        an account with this address exists but never proved it: sign in with its password (or reset \
                        the password by mail) and link \(request.provider) from its settings
                        """)
                }
                try await store.insertIdentity(identity, for: uid, on: c)
                let (session, refresh) = try await store.startSession(userID: uid, refreshTTL: refreshTTL, on: c)
                return (user, session, refresh, false)
            }
            // A new account. Its email is its sign-in key only when verified and free; otherwise
            // the account is reached through the provider alone.
            let taken = try await store.emailTaken(email, on: c)
            let key = identity.emailVerified && !email.isEmpty && !taken ? EmailKey.normalize(email) : "\(request.provider):\(identity.subject)"
            let id = UUIDv7.string()
            let displayName = name ?? (email.split(separator: "@").first.map(String.init).flatMap { $0.isEmpty ? nil : $0 } ?? "Chronir user")
            guard var user = try await store.insertUser(id: id, email: email, emailKey: key, passwordHash: "",
                                                        displayName: String(displayName.prefix(50)), settings: UserSettings(),
                                                        platform: nil, on: c) else {
                throw ServiceError(.alreadyExists, "an account for this identity already exists; sign in again")
            }
            if identity.emailVerified, !email.isEmpty, try await store.markEmailVerified(of: id, email: email, on: c),
               let proven = try await store.user(id: id, on: c) {
                user = proven
            }
            try await store.insertIdentity(identity, for: id, on: c)
            let (session, refresh) = try await store.startSession(userID: id, refreshTTL: refreshTTL, on: c)
            try await outbox.append(AccountsEvents.userUpserted, upserted(user), actor: id, on: c)
            return (user, session, refresh, true)
        }
        return try await result(user, session: session, refresh: refresh)
    }
}
