import Foundation
import GatewayCore
import Messaging

/// Limits on the routes that cost the most and are guessed at: sign-up per address (a token
/// bucket), login failures per (account, address) and per address (exponential back-off, so
/// an attacker elsewhere cannot lock the owner out), confirmations of mailed tokens per
/// address, reset mails per email address, verification mails and password links per account
/// and per address, store verifications per account (token buckets). A refusal is `CA019`
/// with `retryAfterSeconds` (``ErrorMiddleware`` turns it into `Retry-After`).
///
/// An address is the client's as ``ClientAddresses`` reads it (behind trusted proxies, the
/// forwarded one; IPv6 by /64). Which buckets a request takes, in which order, and what a
/// refusal gives back is ``ThrottleAdmission`` (GatewayCore); the counting is ``ThrottleRules``;
/// where the counts live is a ``ThrottleState``: shared by every gateway replica through accounts (the default,
/// `CHRONIR_THROTTLE_STATE=shared`), or this process's memory (`local`).
final class AuthThrottle: Sendable {
    /// The limits (``ThrottleLimits``; `GatewayConfig` reads them).
    typealias Limits = ThrottleLimits

    private let limits: Limits
    private let state: any ThrottleState

    /// `state`: where the buckets and failures live (``LocalThrottleState``, or
    /// ``SharedThrottleState`` for every replica at once).
    init(limits: Limits, state: any ThrottleState = LocalThrottleState()) {
        self.limits = limits
        self.state = state
    }

    /// Takes `admission`'s tokens (``ThrottleAdmission/decide(_:take:refund:)``), or throws `CA019`
    /// with the wait of the bucket that refused; what the earlier buckets took is given back.
    private func admit(_ admission: ThrottleAdmission, now: Date) async throws {
        let refusal = await ThrottleAdmission.decide(admission.steps(limits)) { [state] in
            await state.take($0.bucket, $0.key, perHour: $0.perHour, now: now)
        } refund: { [state] in
            await state.refund($0.bucket, $0.key, perHour: $0.perHour)
        }
        if let refusal { throw ServiceError.rateLimited(refusal.message, retryAfter: refusal.retryAfter) }
    }

    /// Gives back every token `admission` took (it was served and should not count).
    private func refund(_ admission: ThrottleAdmission) async {
        for step in admission.steps(limits) { await state.refund(step.take.bucket, step.take.key, perHour: step.take.perHour) }
    }

    /// Takes one sign-up from `address`'s bucket (and its /48's), or throws `CA019`.
    func admitSignup(address: String, now: Date = Date()) async throws {
        try await admit(.signup(address: address), now: now)
    }

    /// Takes one store notification from `address`'s bucket, or throws `CA019` — before the body
    /// is read. One that is applied gives it back (``refundStoreNotification(address:)``), so the
    /// limit bounds refused ones (made up, replayed, badly signed), not the store's traffic.
    func admitStoreNotification(address: String, now: Date = Date()) async throws {
        try await admit(.storeNotification(address: address), now: now)
    }

    func refundStoreNotification(address: String) async {
        await refund(.storeNotification(address: address))
    }

    /// Takes one operator-token attempt from `address`'s bucket, or throws `CA019`; a right
    /// token gives it back (``refundOpsToken(address:)``).
    func admitOpsToken(address: String, now: Date = Date()) async throws {
        try await admit(.opsToken(address: address), now: now)
    }

    func refundOpsToken(address: String) async {
        await refund(.opsToken(address: address))
    }

    /// Takes one alarm edit from the bucket of `user`'s edits of `alarm` and from `user`'s, or
    /// throws `CA019`. The alarm's bucket is per editor: one member cannot use up the owner's
    /// edits of a shared alarm.
    func admitAlarmEdit(user: String, alarm: String, now: Date = Date()) async throws {
        try await admit(.alarmEdit(user: user, alarm: alarm), now: now)
    }

    /// Takes one data export from `user`'s bucket, or throws `CA019`.
    func admitExport(user: String, now: Date = Date()) async throws {
        try await admit(.export(user: user), now: now)
    }

    /// Takes one alarm import from `user`'s bucket, or throws `CA019`.
    func admitImport(user: String, now: Date = Date()) async throws {
        try await admit(.alarmImport(user: user), now: now)
    }

    /// Takes one analytics batch from `user`'s bucket, or throws `CA019`.
    func admitAnalytics(user: String, now: Date = Date()) async throws {
        try await admit(.analytics(user: user), now: now)
    }

    /// Takes one confirmation of a mailed token from `address`'s bucket, or throws `CA019`.
    /// A confirmation that succeeds gives it back (``refundTokenConfirm(address:)``), so only
    /// made-up, used or expired tokens use the limit up: guessing tokens is bounded, answering
    /// one's own mails is not.
    func admitTokenConfirm(address: String, now: Date = Date()) async throws {
        try await admit(.tokenConfirm(address: address), now: now)
    }

    /// Gives back the confirmation ``admitTokenConfirm(address:)`` took (the token was good).
    func refundTokenConfirm(address: String) async {
        await refund(.tokenConfirm(address: address))
    }

    /// Takes one reset mail from the bucket of `email` (its ``EmailKey`` form), or throws `CA019`.
    /// The answer is the same whether or not the address has an account.
    func admitResetMail(email: String, now: Date = Date()) async throws {
        try await admit(.resetMail(email: email), now: now)
    }

    /// Takes one verification mail from `user`'s bucket, or throws `CA019`.
    func admitVerificationMail(user: String, now: Date = Date()) async throws {
        try await admit(.verificationMail(user: user), now: now)
    }

    /// Takes one password link (a password hash) from `user`'s and from `address`'s buckets, or
    /// throws `CA019`; checked before the request reaches the hasher.
    func admitPasswordLink(user: String, address: String, now: Date = Date()) async throws {
        try await admit(.passwordLink(user: user, address: address), now: now)
    }

    /// Takes one store verification from `user`'s bucket, or throws `CA019`.
    func admitStoreVerification(user: String, now: Date = Date()) async throws {
        try await admit(.storeVerification(user: user), now: now)
    }

    /// Throws `CA019` while `account` from `address`, or `address` itself, is backing off after
    /// failed logins. Failures from one address never hold back the account's owner at another.
    ///
    /// An IPv6 /48 also has a bucket of failed logins (``Limits/ipv6PrefixShare`` times an
    /// address's free failures an hour): each login is a password hash, and 65 536 /64s with 20
    /// free failures each would keep the hash queue full.
    func admitLogin(account: String, address: String, now: Date = Date()) async throws {
        if let wait = await state.loginWait(account: account, address: address, now: now) {
            throw ServiceError.rateLimited("too many failed logins; try again later", retryAfter: wait)
        }
        try await admit(.loginPrefix(address: address), now: now)
    }

    /// Records a login's outcome: a failure extends the back-off of (account, address) and of
    /// the address, a success clears the pair's (and gives the /48's turn back).
    func recordLogin(account: String, address: String, succeeded: Bool, now: Date = Date()) async {
        await state.loginOutcome(account: account, address: address, succeeded: succeeded, limits: limits, now: now)
        if succeeded { await refund(.loginPrefix(address: address)) }
    }
}
