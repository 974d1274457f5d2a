import Contracts
import Foundation
import GatewayCore
import JWTKit
import Logging
import Messaging
import Synchronization

/// Who is calling, from a verified access token.
struct Caller: Sendable {
    var uid: String
    var session: String
    var email: String
    /// Whether the account proved `email` (the token's `email_verified` claim).
    var emailVerified: Bool
    /// When the access token expires (its `exp`); a live stream opened with it ends then.
    var expiresAt: Date = .distantFuture

    /// Headers that carry the session and email (and whether it is proven) to the services.
    var headers: [String: String] {
        emailVerified ? [AuthHeaders.session: session, AuthHeaders.email: email, AuthHeaders.emailVerified: "1"]
            : [AuthHeaders.session: session, AuthHeaders.email: email]
    }
}

/// The claims the accounts service puts in access tokens.
struct AccessClaims: JWTPayload {
    var sub: SubjectClaim
    var sid: String
    var email: String
    /// Absent in tokens issued before the claim existed: not proven.
    var email_verified: Bool?
    var exp: ExpirationClaim
    var iss: IssuerClaim
    var aud: AudienceClaim

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// Verifies bearer tokens locally with the public keys the accounts service serves
/// (`accounts.keys`), refused when their session was revoked. Verified tokens are cached until
/// they expire, so a busy client costs one signature check.
///
/// A token that fails verification may be signed with a key rotated in since the keys were
/// loaded, so it makes the verifier fetch the keys again. Fetches are coalesced: while one is
/// in flight (whatever started it) every request that needs the keys waits for it and gets its
/// result, so a burst of tokens with the new key costs one fetch and none of them is refused.
/// A fetch caused by a failed verification starts only when the last such fetch finished at
/// least ``failureRefreshInterval`` (1 s) ago: a flood of garbage tokens or made-up key ids
/// costs the accounts service one request per interval, not one per token.
final class TokenVerifier: Sendable {
    private let keys = JWTKeyCollection()
    private let loaded = Mutex<Set<String>>([])
    private let expected = Mutex<(issuer: String, audience: String)?>(nil)
    private let cache = Mutex<[String: (Caller, Date)]>([:])
    private let accounts: RPCClient
    private let revocations: RevocationList
    private let logger: Logger
    /// The shortest time between the end of a key fetch caused by a token that failed
    /// verification and the start of the next such fetch.
    let failureRefreshInterval: Duration

    /// The key fetch in flight, how many ended, and when the last one a failed verification
    /// caused ended.
    private struct Fetching: Sendable {
        var inFlight: Task<Bool, Never>?
        var completed: UInt64 = 0
        var lastFailureFetchEnded: ContinuousClock.Instant?
    }
    /// What a caller needing the keys does (``coalescedFetch(afterFailure:seen:)``).
    private enum FetchStep: Sendable {
        /// Wait for this fetch (in flight, or just started).
        case wait(Task<Bool, Never>)
        /// A fetch ended since the caller's token was tried: try it again, without fetching.
        case retry
        /// Nothing fetched: a failure's fetch ended less than the interval ago.
        case refuse
    }
    private let fetching = Mutex(Fetching())
    private let fetches = Atomic<Int>(0)
    /// Keys no longer published are dropped after the longest token lifetime (``KeyRetirement``).
    private let retirement: Mutex<KeyRetirement>
    /// How often the keys are fetched in the background (so retired ones are noticed).
    let periodicRefresh: Duration

    init(accounts: RPCClient, revocations: RevocationList, logger: Logger, failureRefreshInterval: Duration = .seconds(1),
         retiredKeyGrace: Duration = .seconds(3660), periodicRefresh: Duration = .seconds(300)) {
        self.accounts = accounts
        self.revocations = revocations
        self.logger = logger
        self.failureRefreshInterval = failureRefreshInterval
        self.retirement = Mutex(KeyRetirement(grace: Double(retiredKeyGrace.components.seconds)))
        self.periodicRefresh = periodicRefresh
    }

    /// How many times the keys were requested from the accounts service (`accounts.keys`).
    var keyFetches: Int { fetches.load(ordering: .relaxed) }

    /// Fetches the signing keys, or waits for the fetch already in flight; returns whether any
    /// are loaded after it.
    @discardableResult
    func refreshKeys() async -> Bool {
        await coalescedFetch(afterFailure: false) ?? !loaded.withLock { $0.isEmpty }
    }

    /// Waits for the key fetch in flight, or starts one — unless `afterFailure` (a token failed
    /// verification) and the last fetch a failure caused ended less than
    /// ``failureRefreshInterval`` ago: then nil, nothing fetched. `seen`: how many fetches had
    /// ended when the caller's token was tried; if one ended since, the caller just tries again
    /// (the keys it needs may be there). Else whether keys are loaded after the fetch.
    private func coalescedFetch(afterFailure: Bool, seen: UInt64? = nil) async -> Bool? {
        let step = fetching.withLock { f -> FetchStep in
            if let running = f.inFlight { return .wait(running) }
            if let seen, f.completed != seen { return .retry }
            if afterFailure, let ended = f.lastFailureFetchEnded, ended.duration(to: ContinuousClock.now) < failureRefreshInterval {
                return .refuse
            }
            let started = Task { [self] () async -> Bool in
                let ok = await fetchKeys()
                fetching.withLock { state in
                    state.inFlight = nil
                    state.completed &+= 1
                    if afterFailure { state.lastFailureFetchEnded = ContinuousClock.now }
                }
                return ok
            }
            f.inFlight = started
            return .wait(started)
        }
        switch step {
        case .wait(let task): return await task.value
        case .retry: return !loaded.withLock { $0.isEmpty }
        case .refuse: return nil
        }
    }

    /// One request for the signing keys (``coalescedFetch(afterFailure:seen:)`` is the only caller);
    /// returns whether any are loaded.
    private func fetchKeys() async -> Bool {
        _ = fetches.wrappingAdd(1, ordering: .relaxed)
        do {
            let published = try await accounts.call(AccountsMethods.Keys.self, Empty(), timeout: .seconds(2))
            for key in published.keys where !loaded.withLock({ $0.contains(key.kid) }) {
                await keys.add(eddsa: try EdDSA.PublicKey(x: key.x, curve: .ed25519), kid: JWKIdentifier(string: key.kid))
                loaded.withLock { _ = $0.insert(key.kid) }
            }
            let retired = retirement.withLock { $0.published(Set(published.keys.map(\.kid)), at: Date()) }
            for kid in retired {
                _ = await keys.remove(kid: JWKIdentifier(string: kid))
                loaded.withLock { _ = $0.remove(kid) }
                // Tokens it signed that were verified before stay cached until they expire,
                // which is no later than the grace: the cache needs no purge.
                logger.notice("token signing key retired: tokens it signed are refused from now on", metadata: ["kid": "\(kid)"])
            }
            expected.withLock { $0 = (published.issuer, published.audience) }
        } catch {
            logger.warning("cannot load token keys from accounts yet", metadata: ["error": "\(error)"])
        }
        return !loaded.withLock { $0.isEmpty }
    }

    /// Keeps trying to load keys until it succeeds (at start accounts may not be up yet), then
    /// fetches them every ``periodicRefresh`` so keys the accounts service retired are dropped.
    func loadKeys() async {
        var delay = Duration.milliseconds(200)
        while !Task.isCancelled {
            if await refreshKeys() { break }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(5))
        }
        while !Task.isCancelled {
            do { try await Task.sleep(for: periodicRefresh) } catch { return }
            await refreshKeys()
        }
    }

    /// After a token failed verification: waits for the key fetch in flight, or fetches the keys
    /// unless a failure's fetch ended less than ``failureRefreshInterval`` ago (a fetch that
    /// ended since the token was tried, `seen`, counts as one for it); returns whether keys are
    /// loaded and the token is worth verifying again.
    private func refreshAfterFailure(seen: UInt64) async -> Bool {
        await coalescedFetch(afterFailure: true, seen: seen) ?? false
    }

    /// The caller of a request with `authorization` header value, or a `CA012` error.
    /// The caller's session ended here (logout, account deletion, confirmed by accounts): its
    /// tokens are refused by this gateway at once, not only once the accounts stream says so.
    func signedOut(_ session: String) {
        revocations.revoke(session)
    }

    func verify(authorization: String?) async throws -> Caller {
        guard let header = authorization, header.utf8.count > 7,
              zip(header.utf8.prefix(7), "bearer ".utf8).allSatisfy({ $0 == $1 || ($1 != 0x20 && $0 | 0x20 == $1) }) else {
            throw ServiceError(.authRequired, "missing bearer token (Authorization: Bearer <accessToken>)")
        }
        // Spaces and tabs around the token are dropped (Foundation's trimming was ~5 % of the
        // gateway's CPU in a burst).
        let utf8 = header.utf8
        var start = utf8.index(utf8.startIndex, offsetBy: 7), end = utf8.endIndex
        while start < end, utf8[start] == 0x20 || utf8[start] == 0x09 { start = utf8.index(after: start) }
        while end > start, utf8[utf8.index(before: end)] == 0x20 || utf8[utf8.index(before: end)] == 0x09 { end = utf8.index(before: end) }
        let token = String(Substring(utf8[start..<end]))
        let now = Date()
        if let (caller, expiry) = cache.withLock({ $0[token] }), expiry > now {
            guard !revocations.isRevoked(caller.session) else { throw ServiceError(.authRequired, "this session was signed out") }
            return caller
        }
        if loaded.withLock({ $0.isEmpty }) {
            guard await refreshKeys() else { throw ServiceError(.serviceUnavailable, "authentication is not available yet") }
        }
        let seen = fetching.withLock { $0.completed }
        let claims: AccessClaims
        do {
            claims = try await keys.verify(token, as: AccessClaims.self)
        } catch let error as JWTError where error.errorType == .claimVerificationFailure {
            throw ServiceError(.authRequired, "access token expired")
        } catch {
            // An unknown key id may mean the keys were rotated: reload (or wait for the reload
            // in flight; a failure starts one at most once per interval) and try again.
            if await refreshAfterFailure(seen: seen), let again = try? await keys.verify(token, as: AccessClaims.self) {
                claims = again
            } else {
                throw ServiceError(.authRequired, "access token is not valid")
            }
        }
        if let (issuer, audience) = expected.withLock({ $0 }) {
            guard claims.iss.value == issuer, claims.aud.value.contains(audience) else {
                throw ServiceError(.authRequired, "access token was not issued for this API")
            }
        }
        let caller = Caller(uid: claims.sub.value, session: claims.sid, email: claims.email,
                            emailVerified: claims.email_verified == true, expiresAt: claims.exp.value)
        guard !revocations.isRevoked(caller.session) else { throw ServiceError(.authRequired, "this session was signed out") }
        cache.withLock { c in
            if c.count > 100_000 { c.removeAll() }
            c[token] = (caller, claims.exp.value)
        }
        return caller
    }
}
