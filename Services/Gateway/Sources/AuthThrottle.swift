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
/// forwarded one; IPv6 by /64). The counting is ``ThrottleRules``; where the counts live is a
/// ``ThrottleState``: shared by every gateway replica through accounts (the default,
/// `CHRONIR_THROTTLE_STATE=shared`), or this process's memory (`local`).
final class AuthThrottle: Sendable {
    /// Settings (`CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR`, `CHRONIR_LOGIN_FAILURES_FREE`,
    /// `CHRONIR_LOGIN_ADDRESS_FAILURES_FREE`, `CHRONIR_LOGIN_BACKOFF_MAX`,
    /// `CHRONIR_TOKEN_CONFIRMS_PER_ADDRESS_PER_HOUR`, `CHRONIR_RESET_MAILS_PER_EMAIL_PER_HOUR`).
    struct Limits: Sendable {
        /// Sign-ups one address may make per hour (a burst of this size, refilling evenly).
        var signupsPerAddressPerHour = 20
        /// Failed logins of one account before back-off starts.
        var accountFailuresFree = 5
        /// Failed logins from one address (any account) before back-off starts.
        var addressFailuresFree = 20
        /// The longest back-off.
        var maxBackoffSeconds = 900
        /// Data exports one account may ask for per hour (`CHRONIR_EXPORTS_PER_HOUR`).
        var exportsPerUserPerHour = 6
        /// Alarm imports (up to 500 alarms each) one account may send per hour (`CHRONIR_IMPORTS_PER_HOUR`).
        var importsPerUserPerHour = 20
        /// Analytics batches (up to 100 events each) one account may send per hour (`CHRONIR_ANALYTICS_BATCHES_PER_HOUR`).
        var analyticsBatchesPerUserPerHour = 120
        /// Confirmations of mailed tokens (password reset, email verification) one address may
        /// send per hour that do not succeed (`CHRONIR_TOKEN_CONFIRMS_PER_ADDRESS_PER_HOUR`).
        var tokenConfirmsPerAddressPerHour = 20
        /// Password-reset mails one email address may be sent per hour, however many addresses
        /// ask (`CHRONIR_RESET_MAILS_PER_EMAIL_PER_HOUR`).
        var resetMailsPerEmailPerHour = 5
        /// Verification mails one account may ask for per hour (`CHRONIR_VERIFICATION_MAILS_PER_HOUR`).
        var verificationMailsPerUserPerHour = 5
        /// Password links (`POST /v1/auth/link` with a password: one scrypt hash each) one
        /// account, and separately one address, may try per hour (`CHRONIR_PASSWORD_LINKS_PER_HOUR`).
        var passwordLinksPerHour = 10
        /// Store purchase verifications (`/v1/subscriptions/*`, the snooze ledger) one account
        /// may send per hour (`CHRONIR_STORE_VERIFICATIONS_PER_HOUR`).
        var storeVerificationsPerUserPerHour = 60
        /// Store notifications (`/v1/webhooks/apple`, `/google`: unauthenticated, each a
        /// certificate-chain or token check) one address may send per hour that are refused;
        /// one that is applied gives its turn back (`CHRONIR_STORE_NOTIFICATIONS_REFUSED_PER_HOUR`).
        var storeNotificationsRefusedPerAddressPerHour = 60
        /// Wrong operator tokens one address may send per hour (`CHRONIR_OPS_TOKEN_FAILURES_PER_HOUR`).
        var opsTokenFailuresPerAddressPerHour = 10
        /// How many /64s' worth of every per-address limit one IPv6 /48 may take
        /// (`CHRONIR_IPV6_PREFIX_SHARE`): a /48 holds 65 536 /64s, and an attacker holding one
        /// must not multiply the limits by that.
        var ipv6PrefixShare = 8
        /// Alarm edits one account may make per hour (`CHRONIR_ALARM_EDITS_PER_HOUR`; each edit of
        /// a shared or group alarm sends a silent push to every member's devices).
        var alarmEditsPerUserPerHour = 600
        /// Edits of one alarm per hour by one editor (`CHRONIR_ALARM_EDITS_PER_ALARM_PER_HOUR`).
        var alarmEditsPerAlarmPerHour = 120
    }

    private let limits: Limits
    private let state: any ThrottleState

    /// `state`: where the buckets and failures live (``LocalThrottleState``, or
    /// ``SharedThrottleState`` for every replica at once).
    init(limits: Limits, state: any ThrottleState = LocalThrottleState()) {
        self.limits = limits
        self.state = state
    }

    /// Takes one from `address`'s bucket and, for IPv6, from its /48's (``Limits/ipv6PrefixShare``
    /// times as large); the seconds to wait when either is empty (the /64's token is then given
    /// back: the request was not served).
    private func takeAddress(_ bucket: String, _ address: String, perHour: Int, now: Date) async -> Int? {
        if let wait = await state.take(bucket, address, perHour: perHour, now: now) { return wait }
        guard let prefix = ClientAddresses.prefix48(of: address) else { return nil }
        if let wait = await state.take(bucket, prefix, perHour: perHour * limits.ipv6PrefixShare, now: now) {
            await state.refund(bucket, address, perHour: perHour)
            return wait
        }
        return nil
    }

    /// Gives back what ``takeAddress(_:_:perHour:now:)`` took.
    private func refundAddress(_ bucket: String, _ address: String, perHour: Int) async {
        await state.refund(bucket, address, perHour: perHour)
        if let prefix = ClientAddresses.prefix48(of: address) { await state.refund(bucket, prefix, perHour: perHour * limits.ipv6PrefixShare) }
    }

    /// Takes one sign-up from `address`'s bucket (and its /48's), or throws `CA019`.
    func admitSignup(address: String, now: Date = Date()) async throws {
        if let wait = await takeAddress("signups", address, perHour: limits.signupsPerAddressPerHour, now: now) {
            throw Self.refusal("too many sign-ups from this address", wait)
        }
    }

    /// Takes one store notification from `address`'s bucket, or throws `CA019` — before the body
    /// is read. One that is applied gives it back (``refundStoreNotification(address:)``), so the
    /// limit bounds refused ones (made up, replayed, badly signed), not the store's traffic.
    func admitStoreNotification(address: String, now: Date = Date()) async throws {
        if let wait = await takeAddress("storeNotifications", address, perHour: limits.storeNotificationsRefusedPerAddressPerHour, now: now) {
            throw Self.refusal("too many refused store notifications from this address", wait)
        }
    }

    func refundStoreNotification(address: String) async {
        await refundAddress("storeNotifications", address, perHour: limits.storeNotificationsRefusedPerAddressPerHour)
    }

    /// Takes one operator-token attempt from `address`'s bucket, or throws `CA019`; a right
    /// token gives it back (``refundOpsToken(address:)``).
    func admitOpsToken(address: String, now: Date = Date()) async throws {
        if let wait = await takeAddress("opsToken", address, perHour: limits.opsTokenFailuresPerAddressPerHour, now: now) {
            throw Self.refusal("too many wrong operator tokens from this address", wait)
        }
    }

    func refundOpsToken(address: String) async {
        await refundAddress("opsToken", address, perHour: limits.opsTokenFailuresPerAddressPerHour)
    }

    /// Takes one alarm edit from `user`'s bucket and from the bucket of `user`'s edits of
    /// `alarm`, or throws `CA019`. The alarm's bucket is per editor: one member cannot use up
    /// the owner's edits of a shared alarm.
    func admitAlarmEdit(user: String, alarm: String, now: Date = Date()) async throws {
        let key = "alarm:\(alarm):\(user)"
        if let wait = await state.take("alarmEdits", key, perHour: limits.alarmEditsPerAlarmPerHour, now: now) {
            throw Self.refusal("too many edits of this alarm; try again later", wait)
        }
        if let wait = await state.take("alarmEdits", "user:" + user, perHour: limits.alarmEditsPerUserPerHour, now: now) {
            await state.refund("alarmEdits", key, perHour: limits.alarmEditsPerAlarmPerHour)
            throw Self.refusal("too many alarm edits from this account; try again later", wait)
        }
    }

    /// Takes one data export from `user`'s bucket, or throws `CA019`.
    func admitExport(user: String, now: Date = Date()) async throws {
        if let wait = await state.take("exports", user, perHour: limits.exportsPerUserPerHour, now: now) {
            throw Self.refusal("too many exports of this account", wait)
        }
    }

    /// Takes one alarm import from `user`'s bucket, or throws `CA019`.
    func admitImport(user: String, now: Date = Date()) async throws {
        if let wait = await state.take("imports", user, perHour: limits.importsPerUserPerHour, now: now) {
            throw Self.refusal("too many alarm imports for this account", wait)
        }
    }

    /// Takes one analytics batch from `user`'s bucket, or throws `CA019`.
    func admitAnalytics(user: String, now: Date = Date()) async throws {
        if let wait = await state.take("analytics", user, perHour: limits.analyticsBatchesPerUserPerHour, now: now) {
            throw Self.refusal("too many analytics batches from this account", wait)
        }
    }

    /// Takes one confirmation of a mailed token from `address`'s bucket, or throws `CA019`.
    /// A confirmation that succeeds gives it back (``refundTokenConfirm(address:)``), so only
    /// made-up, used or expired tokens use the limit up: guessing tokens is bounded, answering
    /// one's own mails is not.
    func admitTokenConfirm(address: String, now: Date = Date()) async throws {
        if let wait = await takeAddress("confirms", address, perHour: limits.tokenConfirmsPerAddressPerHour, now: now) {
            throw Self.refusal("too many token confirmations from this address", wait)
        }
    }

    /// Gives back the confirmation ``admitTokenConfirm(address:)`` took (the token was good).
    func refundTokenConfirm(address: String) async {
        await refundAddress("confirms", address, perHour: limits.tokenConfirmsPerAddressPerHour)
    }

    /// Takes one reset mail from the bucket of `email` (its ``EmailKey`` form), or throws `CA019`.
    /// The answer is the same whether or not the address has an account.
    func admitResetMail(email: String, now: Date = Date()) async throws {
        if let wait = await state.take("resetMails", email, perHour: limits.resetMailsPerEmailPerHour, now: now) {
            throw Self.refusal("too many password-reset mails to this address; try again later", wait)
        }
    }

    /// Takes one verification mail from `user`'s bucket, or throws `CA019`.
    func admitVerificationMail(user: String, now: Date = Date()) async throws {
        if let wait = await state.take("verificationMails", user, perHour: limits.verificationMailsPerUserPerHour, now: now) {
            throw Self.refusal("too many verification mails for this account; try again later", wait)
        }
    }

    /// Takes one password link (a password hash) from `user`'s and from `address`'s buckets, or
    /// throws `CA019`; checked before the request reaches the hasher.
    func admitPasswordLink(user: String, address: String, now: Date = Date()) async throws {
        var wait = await state.take("links", "user:" + user, perHour: limits.passwordLinksPerHour, now: now)
        // The address under a bucket of its own (its key must be the plain limit key for its /48).
        if wait == nil { wait = await takeAddress("linksByAddress", address, perHour: limits.passwordLinksPerHour, now: now) }
        if let wait {
            throw Self.refusal("too many attempts to set a password; try again later", wait)
        }
    }

    /// Takes one store verification from `user`'s bucket, or throws `CA019`.
    func admitStoreVerification(user: String, now: Date = Date()) async throws {
        if let wait = await state.take("store", user, perHour: limits.storeVerificationsPerUserPerHour, now: now) {
            throw Self.refusal("too many store verifications for this account; try again later", wait)
        }
    }

    /// Throws `CA019` while `account` from `address`, or `address` itself, is backing off after
    /// failed logins. Failures from one address never hold back the account's owner at another.
    ///
    /// An IPv6 /48 also has a bucket of failed logins (``Limits/ipv6PrefixShare`` times an
    /// address's free failures an hour): each login is a password hash, and 65 536 /64s with 20
    /// free failures each would keep the hash queue full.
    func admitLogin(account: String, address: String, now: Date = Date()) async throws {
        if let wait = await state.loginWait(account: account, address: address, now: now) {
            throw Self.refusal("too many failed logins; try again later", wait)
        }
        if let prefix = ClientAddresses.prefix48(of: address),
           let wait = await state.take("logins48", prefix, perHour: limits.addressFailuresFree * limits.ipv6PrefixShare, now: now) {
            throw Self.refusal("too many failed logins from this network; try again later", wait)
        }
    }

    /// Records a login's outcome: a failure extends the back-off of (account, address) and of
    /// the address, a success clears the pair's (and gives the /48's turn back).
    func recordLogin(account: String, address: String, succeeded: Bool, now: Date = Date()) async {
        await state.loginOutcome(account: account, address: address, succeeded: succeeded, limits: limits, now: now)
        if succeeded, let prefix = ClientAddresses.prefix48(of: address) {
            await state.refund("logins48", prefix, perHour: limits.addressFailuresFree * limits.ipv6PrefixShare)
        }
    }

    private static func refusal(_ message: String, _ seconds: Int) -> ServiceError {
        ServiceError.rateLimited(message, retryAfter: seconds)
    }
}
