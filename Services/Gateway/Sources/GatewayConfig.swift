import Foundation
import GatewayCore
import ServiceKit

/// The gateway's settings (environment, with defaults), read and checked before anything
/// connects or listens (``ServiceHost/main(service:config:build:)``). The settings every service
/// reads (logging, the bus, RPC, the operations endpoint, the shutdown grace) stay with
/// ``ServiceRuntime`` and ``ServiceHost``.
public struct GatewayConfig: ServiceConfig {
    /// How long a call to another service may take (`CHRONIR_UPSTREAM_TIMEOUT`, default 10 s).
    public var upstreamTimeout: Duration
    /// The longest lifetime of an access token (`CHRONIR_ACCESS_TTL`, default 1 h, as the
    /// accounts service's): a revocation is remembered this long (and two minutes).
    public var accessTTL: Duration
    /// How long a signing key the accounts service stops publishing is still trusted
    /// (`CHRONIR_RETIRED_KEY_GRACE`, default `CHRONIR_ACCESS_TTL` plus a minute: 1 h 1 min).
    public var retiredKeyGrace: Duration
    /// How often the signing keys are fetched in the background (`CHRONIR_KEY_REFRESH`, default 300 s).
    public var keyRefresh: Duration
    /// The limits of the costly and guessed-at routes (``AuthThrottle/Limits``, whose defaults these are):
    /// `CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR` (20, 1…10 000 000), `CHRONIR_EXPORTS_PER_HOUR`
    /// (6, 1…10 000), `CHRONIR_IMPORTS_PER_HOUR` (20, 1…10 000), `CHRONIR_ANALYTICS_BATCHES_PER_HOUR`
    /// (120, 1…1 000 000), `CHRONIR_LOGIN_FAILURES_FREE` (5, 1…1 000 000),
    /// `CHRONIR_LOGIN_ADDRESS_FAILURES_FREE` (20, 1…1 000 000), `CHRONIR_LOGIN_BACKOFF_MAX`
    /// (900 s, 1…86 400), `CHRONIR_TOKEN_CONFIRMS_PER_ADDRESS_PER_HOUR` (20, 1…10 000 000),
    /// `CHRONIR_RESET_MAILS_PER_EMAIL_PER_HOUR` (5, 1…10 000), `CHRONIR_VERIFICATION_MAILS_PER_HOUR`
    /// (5, 1…10 000), `CHRONIR_PASSWORD_LINKS_PER_HOUR` (10, 1…10 000),
    /// `CHRONIR_STORE_VERIFICATIONS_PER_HOUR` (60, 1…1 000 000).
    var limits: AuthThrottle.Limits
    /// Where the limits count (`CHRONIR_THROTTLE_STATE`): `shared` (default) in accounts'
    /// PostgreSQL, one count for every gateway replica; `local` in this process only.
    var sharedThrottle: Bool
    /// The sign-in providers offered to the web app (``WebSignIn/from(_:)``):
    /// `CHRONIR_WEB_APPLE_CLIENT_ID` and `CHRONIR_WEB_GOOGLE_CLIENT_ID` (unset: that provider is
    /// off), `CHRONIR_APPLE_AUTHORIZE_URL` (default `https://appleid.apple.com/auth/authorize`)
    /// and `CHRONIR_GOOGLE_AUTHORIZE_URL` (default `https://accounts.google.com/o/oauth2/v2/auth`),
    /// each an http(s) URL without a fragment.
    var webSignIn: WebSignIn
    /// The calendar feeds' URLs on this server (`CHRONIR_PUBLIC_URL`; default unset: the request's host).
    public var publicURL: String?
    /// The most live streams one account may hold at once (`CHRONIR_LIVE_STREAMS_PER_ACCOUNT`,
    /// default 10, 1…1 000 000).
    public var liveStreamsPerAccount: Int
    /// Items one live stream holds for a client that has not read them yet (`CHRONIR_LIVE_BUFFER`,
    /// default 1 024, 1…1 000 000); what does not fit is read from the inbox when the client catches up.
    public var liveBuffer: Int
    /// Fault tests only (`CHRONIR_FAILPOINT_CLOCK_AHEAD`, a duration; default 0): this gateway
    /// reads its host's wall clock that far ahead, as a host whose NTP stopped would.
    public var clockAhead: Duration
    /// How often the live stream reads the database's clock again (`CHRONIR_CLOCK_CHECK_INTERVAL`,
    /// 10 s by default).
    public var clockCheckInterval: Duration
    /// A pause before each live-stream write (`CHRONIR_FAILPOINT_LIVE_WRITE_DELAY`, default 0; tests only).
    public var liveWriteDelay: Duration
    /// The operator's HTTP token of `GET /v1/ops/status` (`CHRONIR_OPS_TOKEN` or `CHRONIR_OPS_TOKEN_FILE`,
    /// at least 16 characters; default unset: the route answers 404).
    public var opsToken: String?
    /// The folder of the web client and the operations page (`CHRONIR_WEB_ROOT`, default `web`,
    /// the checkout's): its `app/` and `ops/` files are read here, once (``webFiles``).
    public let webRoot: String
    /// The servable files under ``webRoot`` by URL path (none: `/app/` and `/ops/` are off).
    let webFiles: [String: WebRoutes.File]
    /// The address the HTTP server listens on (`CHRONIR_HTTP_HOST`, default `0.0.0.0`).
    public var httpHost: String
    /// The HTTP port (`CHRONIR_HTTP_PORT`, default 8080, 0…65535; 0: any free port).
    public var httpPort: Int
    /// The queue of connections not yet accepted (`CHRONIR_HTTP_BACKLOG`, default 4096, 1…65535; the
    /// kernel caps it at `net.core.somaxconn`).
    public var httpBacklog: Int
    /// A connection idle this long is closed (`CHRONIR_HTTP_IDLE_TIMEOUT`, default 75 s; 0 turns it off).
    public var httpIdleTimeout: Duration
    /// The time every request body gets to arrive (`CHRONIR_HTTP_BODY_TIMEOUT`, default 20 s; 0
    /// turns it off), extended by a second for every `CHRONIR_HTTP_BODY_MIN_RATE` bytes that
    /// arrived (default 500, 1…1 000 000 000): ``BodyDeadline``.
    public var httpBodyTimeout: Duration
    public var httpBodyMinRate: Int
    /// The most any request body may take however fast it arrives (`CHRONIR_HTTP_BODY_MAX_TIME`,
    /// default 300 s, at least the body timeout).
    public var httpBodyMaxTime: Duration
    /// The most HTTP connections one peer address may hold open (`CHRONIR_CONNECTIONS_PER_ADDRESS`,
    /// default 64, 0…10 000 000; 0: no cap).
    public var connectionsPerAddress: Int
    /// The most photo upload bodies held at once in this process (`CHRONIR_PHOTO_UPLOADS`,
    /// default 8, 1…10 000); one more is 503 `CA022` with `Retry-After`.
    public var photoUploads: Int
    /// Of those, the most one account may hold (`CHRONIR_PHOTO_UPLOADS_PER_ACCOUNT`, default 2).
    public var photoUploadsPerAccount: Int
    /// The reverse proxies whose `X-Forwarded-For`/`Forwarded` is believed (`CHRONIR_TRUSTED_PROXIES`:
    /// addresses or CIDR blocks, comma- or space-separated; default none: the TCP peer is the
    /// client). See ``ClientAddresses``.
    var clientAddresses: ClientAddresses
    /// How often the live streams are pinged (`CHRONIR_SSE_PING`, default 20 s); a stream whose client
    /// left ends at the next ping.
    public var ssePing: Duration
    /// A streamed answer (the live stream, an export) whose writes have not moved for this long
    /// is closed: its client stopped reading (`CHRONIR_HTTP_WRITE_TIMEOUT`, default 60 s, at
    /// least twice `CHRONIR_SSE_PING`, whose pings keep a healthy stream writing).
    public var httpWriteTimeout: Duration

    public init(environment e: ServiceEnvironment) throws {
        upstreamTimeout = try e.duration("CHRONIR_UPSTREAM_TIMEOUT", .seconds(10))
        let accessTTL = try e.duration("CHRONIR_ACCESS_TTL", .seconds(3600))
        self.accessTTL = accessTTL
        retiredKeyGrace = try e.duration("CHRONIR_RETIRED_KEY_GRACE", accessTTL + .seconds(60))
        keyRefresh = try e.duration("CHRONIR_KEY_REFRESH", .seconds(300))
        var limits = AuthThrottle.Limits()
        limits.signupsPerAddressPerHour = try e.int("CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR", limits.signupsPerAddressPerHour, in: 1...10_000_000)
        limits.exportsPerUserPerHour = try e.int("CHRONIR_EXPORTS_PER_HOUR", limits.exportsPerUserPerHour, in: 1...10_000)
        limits.importsPerUserPerHour = try e.int("CHRONIR_IMPORTS_PER_HOUR", limits.importsPerUserPerHour, in: 1...10_000)
        limits.analyticsBatchesPerUserPerHour = try e.int("CHRONIR_ANALYTICS_BATCHES_PER_HOUR", limits.analyticsBatchesPerUserPerHour, in: 1...1_000_000)
        limits.accountFailuresFree = try e.int("CHRONIR_LOGIN_FAILURES_FREE", limits.accountFailuresFree, in: 1...1_000_000)
        limits.addressFailuresFree = try e.int("CHRONIR_LOGIN_ADDRESS_FAILURES_FREE", limits.addressFailuresFree, in: 1...1_000_000)
        limits.maxBackoffSeconds = try e.int("CHRONIR_LOGIN_BACKOFF_MAX", limits.maxBackoffSeconds, in: 1...86_400)
        limits.tokenConfirmsPerAddressPerHour = try e.int("CHRONIR_TOKEN_CONFIRMS_PER_ADDRESS_PER_HOUR", limits.tokenConfirmsPerAddressPerHour,
                                                          in: 1...10_000_000)
        limits.resetMailsPerEmailPerHour = try e.int("CHRONIR_RESET_MAILS_PER_EMAIL_PER_HOUR", limits.resetMailsPerEmailPerHour, in: 1...10_000)
        limits.verificationMailsPerUserPerHour = try e.int("CHRONIR_VERIFICATION_MAILS_PER_HOUR", limits.verificationMailsPerUserPerHour,
                                                           in: 1...10_000)
        limits.passwordLinksPerHour = try e.int("CHRONIR_PASSWORD_LINKS_PER_HOUR", limits.passwordLinksPerHour, in: 1...10_000)
        limits.storeVerificationsPerUserPerHour = try e.int("CHRONIR_STORE_VERIFICATIONS_PER_HOUR", limits.storeVerificationsPerUserPerHour,
                                                            in: 1...1_000_000)
        limits.storeNotificationsRefusedPerAddressPerHour = try e.int("CHRONIR_STORE_NOTIFICATIONS_REFUSED_PER_HOUR",
                                                                      limits.storeNotificationsRefusedPerAddressPerHour, in: 1...1_000_000)
        limits.opsTokenFailuresPerAddressPerHour = try e.int("CHRONIR_OPS_TOKEN_FAILURES_PER_HOUR", limits.opsTokenFailuresPerAddressPerHour,
                                                             in: 1...10_000)
        limits.ipv6PrefixShare = try e.int("CHRONIR_IPV6_PREFIX_SHARE", limits.ipv6PrefixShare, in: 1...65_536)
        limits.alarmEditsPerUserPerHour = try e.int("CHRONIR_ALARM_EDITS_PER_HOUR", limits.alarmEditsPerUserPerHour, in: 1...10_000_000)
        limits.alarmEditsPerAlarmPerHour = try e.int("CHRONIR_ALARM_EDITS_PER_ALARM_PER_HOUR", limits.alarmEditsPerAlarmPerHour, in: 1...10_000_000)
        self.limits = limits
        switch e.string("CHRONIR_THROTTLE_STATE", "shared") {
        case "shared": sharedThrottle = true
        case "local": sharedThrottle = false
        case let other: throw ServiceEnvironment.Invalid("CHRONIR_THROTTLE_STATE=\(other): expected shared or local")
        }
        webSignIn = try WebSignIn.from(e)
        publicURL = e.optional("CHRONIR_PUBLIC_URL")
        liveStreamsPerAccount = try e.int("CHRONIR_LIVE_STREAMS_PER_ACCOUNT", 10, in: 1...1_000_000)
        liveBuffer = try e.int("CHRONIR_LIVE_BUFFER", 1024, in: 1...1_000_000)
        clockAhead = try e.duration("CHRONIR_FAILPOINT_CLOCK_AHEAD", .zero)
        clockCheckInterval = try e.duration("CHRONIR_CLOCK_CHECK_INTERVAL", .seconds(10))
        liveWriteDelay = try e.duration("CHRONIR_FAILPOINT_LIVE_WRITE_DELAY", .zero)
        let opsToken = try e.secret("CHRONIR_OPS_TOKEN")
        if let opsToken, opsToken.count < 16 { throw ServiceEnvironment.Invalid("CHRONIR_OPS_TOKEN must be at least 16 characters") }
        self.opsToken = opsToken
        let webRoot = e.string("CHRONIR_WEB_ROOT", "web")
        self.webRoot = webRoot
        webFiles = try WebRoutes.load(root: webRoot)
        httpHost = e.string("CHRONIR_HTTP_HOST", "0.0.0.0")
        httpPort = try e.int("CHRONIR_HTTP_PORT", 8080, in: 0...65535)
        httpBacklog = try e.int("CHRONIR_HTTP_BACKLOG", 4096, in: 1...65535)
        httpIdleTimeout = try e.duration("CHRONIR_HTTP_IDLE_TIMEOUT", .seconds(75))
        httpBodyTimeout = try e.duration("CHRONIR_HTTP_BODY_TIMEOUT", .seconds(20))
        httpBodyMinRate = try e.int("CHRONIR_HTTP_BODY_MIN_RATE", 500, in: 1...1_000_000_000)
        httpBodyMaxTime = try e.duration("CHRONIR_HTTP_BODY_MAX_TIME", .seconds(300))
        connectionsPerAddress = try e.int("CHRONIR_CONNECTIONS_PER_ADDRESS", 64, in: 0...10_000_000)
        ssePing = try e.duration("CHRONIR_SSE_PING", .seconds(20))
        httpWriteTimeout = try e.duration("CHRONIR_HTTP_WRITE_TIMEOUT", max(.seconds(60), ssePing * 3))
        guard httpWriteTimeout >= ssePing * 2 else {
            throw ServiceEnvironment.Invalid("CHRONIR_HTTP_WRITE_TIMEOUT must be at least twice CHRONIR_SSE_PING (a healthy live stream writes a ping every CHRONIR_SSE_PING)")
        }
        photoUploads = try e.int("CHRONIR_PHOTO_UPLOADS", 8, in: 1...10_000)
        photoUploadsPerAccount = try e.int("CHRONIR_PHOTO_UPLOADS_PER_ACCOUNT", 2, in: 1...10_000)
        clientAddresses = try ClientAddresses.setting(e.optional("CHRONIR_TRUSTED_PROXIES"))
    }
}
