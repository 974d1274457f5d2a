/// The limits of the gateway's costly and guessed-at routes, per hour unless said otherwise.
/// The gateway reads them from its settings (`GatewayConfig`); these are the defaults.
public struct ThrottleLimits: Sendable, Equatable {
    /// Sign-ups one address may make per hour (a burst of this size, refilling evenly;
    /// `CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR`).
    public var signupsPerAddressPerHour = 20
    /// Failed logins of one account before back-off starts (`CHRONIR_LOGIN_FAILURES_FREE`).
    public var accountFailuresFree = 5
    /// Failed logins from one address (any account) before back-off starts
    /// (`CHRONIR_LOGIN_ADDRESS_FAILURES_FREE`).
    public var addressFailuresFree = 20
    /// The longest back-off (`CHRONIR_LOGIN_BACKOFF_MAX`).
    public var maxBackoffSeconds = 900
    /// Data exports one account may ask for per hour (`CHRONIR_EXPORTS_PER_HOUR`).
    public var exportsPerUserPerHour = 6
    /// Alarm imports (up to 500 alarms each) one account may send per hour (`CHRONIR_IMPORTS_PER_HOUR`).
    public var importsPerUserPerHour = 20
    /// Analytics batches (up to 100 events each) one account may send per hour (`CHRONIR_ANALYTICS_BATCHES_PER_HOUR`).
    public var analyticsBatchesPerUserPerHour = 120
    /// Confirmations of mailed tokens (password reset, email verification) one address may
    /// send per hour that do not succeed (`CHRONIR_TOKEN_CONFIRMS_PER_ADDRESS_PER_HOUR`).
    public var tokenConfirmsPerAddressPerHour = 20
    /// Password-reset mails one email address may be sent per hour, however many addresses
    /// ask (`CHRONIR_RESET_MAILS_PER_EMAIL_PER_HOUR`).
    public var resetMailsPerEmailPerHour = 5
    /// Verification mails one account may ask for per hour (`CHRONIR_VERIFICATION_MAILS_PER_HOUR`).
    public var verificationMailsPerUserPerHour = 5
    /// Password links (`POST /v1/auth/link` with a password: one scrypt hash each) one
    /// account, and separately one address, may try per hour (`CHRONIR_PASSWORD_LINKS_PER_HOUR`).
    public var passwordLinksPerHour = 10
    /// Store purchase verifications (`/v1/subscriptions/*`, the snooze ledger) one account
    /// may send per hour (`CHRONIR_STORE_VERIFICATIONS_PER_HOUR`).
    public var storeVerificationsPerUserPerHour = 60
    /// Store notifications (`/v1/webhooks/apple`, `/google`: unauthenticated, each a
    /// certificate-chain or token check) one address may send per hour that are refused;
    /// one that is applied gives its turn back (`CHRONIR_STORE_NOTIFICATIONS_REFUSED_PER_HOUR`).
    public var storeNotificationsRefusedPerAddressPerHour = 60
    /// Wrong operator tokens one address may send per hour (`CHRONIR_OPS_TOKEN_FAILURES_PER_HOUR`).
    public var opsTokenFailuresPerAddressPerHour = 10
    /// How many /64s' worth of every per-address limit one IPv6 /48 may take
    /// (`CHRONIR_IPV6_PREFIX_SHARE`): a /48 holds 65 536 /64s, and an attacker holding one
    /// must not multiply the limits by that.
    public var ipv6PrefixShare = 8
    /// Alarm edits one account may make per hour (`CHRONIR_ALARM_EDITS_PER_HOUR`; each edit of
    /// a shared or group alarm sends a silent push to every member's devices).
    public var alarmEditsPerUserPerHour = 600
    /// Edits of one alarm per hour by one editor (`CHRONIR_ALARM_EDITS_PER_ALARM_PER_HOUR`).
    public var alarmEditsPerAlarmPerHour = 120

    public init() {}
}
