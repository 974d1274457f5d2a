import Contracts
import Foundation
import Messaging
import PostgresNIO

/// The account's identities and sessions, as its settings list and end them.
extension AccountsHandlers {
    /// The provider name (`apple`, `google`) of an identity's issuer; the issuer itself when no
    /// configured provider claims it.
    func providerName(ofIssuer issuer: String) -> String {
        identities.providers.values.first { $0.issuers.contains(issuer) }?.name ?? issuer
    }

    func listIdentities(_ actor: String) async throws -> AccountsMethods.ListIdentities.Response {
        let rows = try await database.transaction { c in try await store.identities(of: actor, on: c) }
        return .init(identities: rows.map { LinkedIdentity(provider: providerName(ofIssuer: $0.issuer), email: $0.email, linkedAt: $0.linkedAt) })
    }

    /// Unlinks the actor's identities of `provider`, unless nothing would be left to sign in with.
    func unlinkIdentity(_ actor: String, _ request: AccountsMethods.UnlinkIdentity.Request) async throws -> Empty {
        guard let provider = identities.providers[request.provider] else {
            throw ServiceError(.validationFailed, "provider must be one of \(identities.providers.keys.sorted().joined(separator: ", "))",
                               details: .object(["field": .string("provider")]))
        }
        try await outbox.transaction { c in
            guard let hasPassword = try await store.lockHasPassword(actor, on: c) else {
                throw ServiceError(.authRequired, "this account no longer exists")
            }
            let linked = try await store.identities(of: actor, on: c)
            let theirs = linked.filter { provider.issuers.contains($0.issuer) }.count
            guard theirs > 0 else { throw ServiceError(.notFound, "no \(request.provider) identity is linked to this account") }
            guard hasPassword || linked.count > theirs else {
                throw ServiceError(.validationFailed, """
                    \(request.provider) is the only way to sign in to this account: set a password first \
                    (POST /v1/auth/link with email and password) or link another provider
                    """)
            }
            _ = try await store.deleteIdentities(of: actor, issuers: provider.issuers, on: c)
            database.logger.notice("identity unlinked", metadata: ["user": "\(actor)", "provider": "\(request.provider)"])
            guard let user = try await store.user(id: actor, on: c) else { throw ServiceError(.authRequired, "this account no longer exists") }
            try await outbox.append(AccountsEvents.userUpserted, upserted(user), actor: actor, on: c)
        }
        return Empty()
    }

    func listSessions(_ actor: String, current: String?) async throws -> AccountsMethods.ListSessions.Response {
        let rows = try await database.transaction { c in try await store.activeSessions(of: actor, on: c) }
        return .init(sessions: rows.map { SessionSummary(id: $0.id, createdAt: $0.createdAt, lastActiveAt: $0.lastActiveAt, current: $0.id == current) })
    }

    /// Ends one of the actor's sessions; another account's session (or an ended one) is not found.
    func endSession(_ actor: String, _ request: AccountsMethods.EndSession.Request) async throws -> Empty {
        try await outbox.transaction { c in
            guard try await store.revokeSession(request.sessionId, of: actor, reason: "ended from settings", on: c) else {
                throw ServiceError(.notFound, "no active session \"\(request.sessionId)\" of this account")
            }
            try await outbox.append(AccountsEvents.sessionRevoked, AccountsEvents.SessionRevoked(uid: actor, session: request.sessionId),
                                    actor: actor, on: c)
        }
        return Empty()
    }

    /// Signs the actor out everywhere: every active session ends, the asking one included.
    func endAllSessions(_ actor: String) async throws -> AccountsMethods.EndAllSessions.Response {
        let ended: [String] = try await outbox.transaction { c in
            let sessions = try await store.revokeSessions(of: actor, reason: "signed out everywhere", on: c)
            for s in sessions {
                try await outbox.append(AccountsEvents.sessionRevoked, AccountsEvents.SessionRevoked(uid: actor, session: s), actor: actor, on: c)
            }
            try await store.deleteRefreshTokens(of: actor, on: c)
            return sessions
        }
        database.logger.notice("signed out everywhere", metadata: ["user": "\(actor)", "sessions": "\(ended.count)"])
        return .init(ended: ended.count)
    }
}
