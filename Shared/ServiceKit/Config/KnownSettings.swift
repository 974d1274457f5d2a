import Foundation

/// Every `CHRONIR_*` setting the services read, so that a misspelt one is reported at start
/// (``ServiceHost`` logs a warning per name ``unknown(in:)`` returns) instead of being ignored
/// silently. `KnownSettingsTests` reads the sources for every `"CHRONIR_…"` literal and fails
/// when one is missing here: a new setting is added to ``read`` (and to ``secrets`` when it
/// takes a `_FILE` form through ``ServiceEnvironment/secret(_:)``).
public enum KnownSettings {
    /// The settings read under their own name (a string literal in `Shared/` or `Services/`).
    public static let read: Set<String> = [
        "CHRONIR_ACCESS_TTL", "CHRONIR_TRUSTED_PROXIES", "CHRONIR_VERIFICATION_MAILS_PER_HOUR", "CHRONIR_PASSWORD_LINKS_PER_HOUR",
        "CHRONIR_STORE_VERIFICATIONS_PER_HOUR", "CHRONIR_HASH_QUEUE", "CHRONIR_APPLE_ALLOW_SANDBOX", "CHRONIR_PHOTO_UPLOADS", "CHRONIR_ALARM_CREATIONS_PER_MINUTE", "CHRONIR_ANALYTICS",
        "CHRONIR_ANALYTICS_BATCHES_PER_HOUR", "CHRONIR_ANALYTICS_KEY", "CHRONIR_APNS_KEY_FILE", "CHRONIR_APNS_KEY_ID",
        "CHRONIR_APNS_TEAM_ID", "CHRONIR_APNS_TOPIC", "CHRONIR_APNS_URL", "CHRONIR_APPLE_AUDIENCES",
        "CHRONIR_APPLE_AUTHORIZE_URL", "CHRONIR_APPLE_BUNDLE_ID", "CHRONIR_APPLE_GRACE", "CHRONIR_APPLE_JWKS_URL",
        "CHRONIR_APPLE_ROOT_CA_FILE", "CHRONIR_BIND_HOST", "CHRONIR_BUS_KEYS", "CHRONIR_BUS_HEARTBEAT", "CHRONIR_BUS_HEARTBEAT_TIMEOUT", "CHRONIR_BUS_PUBLIC_KEYS",
        "CHRONIR_BUS_SECRET_KEY_FILE", "CHRONIR_CALLS_IN_TRANSACTIONS", "CHRONIR_CHARITY_CATEGORY", "CHRONIR_CHARITY_DESCRIPTION", "CHRONIR_CHARITY_ID",
        "CHRONIR_CHARITY_NAME", "CHRONIR_CHARITY_URL", "CHRONIR_CONNECTIONS_PER_ADDRESS", "CHRONIR_DB_POOL_SIZE", "CHRONIR_DB_CONNECT_TIMEOUT", "CHRONIR_DB_STATEMENT_TIMEOUT",
        "CHRONIR_DB_PROBE_INTERVAL", "CHRONIR_DB_PROBE_TIMEOUT", "CHRONIR_DB_SCHEMA", "CHRONIR_DELIVERY_POLL",
        "CHRONIR_ENTITLEMENT_SWEEP", "CHRONIR_EVENT_LOOPS", "CHRONIR_EXPORTS_PER_HOUR", "CHRONIR_EXPORT_PAGE_SIZE",
        "CHRONIR_FAILPOINT_KILL_BEFORE_CHECKPOINT", "CHRONIR_FAILPOINT_STOP_BEFORE_CHECKPOINT", "CHRONIR_FAILPOINT_STOP_IN_FIRE",
        "CHRONIR_FAILPOINT_LIVE_WRITE_DELAY", "CHRONIR_FAILPOINT_CLOCK_BEHIND", "CHRONIR_FAILPOINT_CLOCK_AHEAD", "CHRONIR_CLOCK_CHECK_INTERVAL", "CHRONIR_LIVE_BUFFER",
        "CHRONIR_POISON_ATTEMPTS", "CHRONIR_CONSUMER_IDLE_TIMEOUT", "CHRONIR_CONSUMER_SILENCE", "CHRONIR_FCM_CREDENTIALS_FILE",
        "CHRONIR_FCM_PROJECT_ID", "CHRONIR_FCM_URL", "CHRONIR_FIRE_BATCH", "CHRONIR_FIRE_CONCURRENCY",
        "CHRONIR_FIRE_GRACE", "CHRONIR_FIRE_LEAD", "CHRONIR_GOOGLE_AUDIENCES", "CHRONIR_GOOGLE_AUTHORIZE_URL",
        "CHRONIR_GOOGLE_GRACE", "CHRONIR_GOOGLE_JWKS_URL", "CHRONIR_HASH_THREADS", "CHRONIR_HTTP_BACKLOG",
        "CHRONIR_HTTP_HOST", "CHRONIR_HTTP_IDLE_TIMEOUT", "CHRONIR_THROTTLE_STATE", "CHRONIR_HTTP_BODY_TIMEOUT", "CHRONIR_HTTP_BODY_MIN_RATE", "CHRONIR_HTTP_PORT", "CHRONIR_IDENTITY_TOKEN_SKEW",
        "CHRONIR_IMPORTS_PER_HOUR", "CHRONIR_INBOX_RETENTION", "CHRONIR_INBOX_SWEEP_INTERVAL", "CHRONIR_INSECURE_BUS",
        "CHRONIR_INSTANCE_ID", "CHRONIR_INVITATIONS_PER_HOUR", "CHRONIR_INVITATION_LIFETIME",
        "CHRONIR_INVITATION_SWEEP", "CHRONIR_KEY_ENCRYPTION_KEY", "CHRONIR_KEY_ENCRYPTION_KEY_PREVIOUS",
        "CHRONIR_KEY_REFRESH", "CHRONIR_LEASE_DURATION", "CHRONIR_LEASE_HEARTBEAT",
        "CHRONIR_LIVE_STREAMS_PER_ACCOUNT", "CHRONIR_LOGIN_ADDRESS_FAILURES_FREE", "CHRONIR_LOGIN_BACKOFF_MAX",
        "CHRONIR_LOGIN_FAILURES_FREE", "CHRONIR_LOG_FORMAT", "CHRONIR_LOG_LEVEL", "CHRONIR_MAIL_FROM",
        "CHRONIR_MAIL_POLL", "CHRONIR_MAX_MESSAGE_BYTES", "CHRONIR_MISSED_WINDOW", "CHRONIR_OPS_HOST",
        "CHRONIR_OPS_PORT", "CHRONIR_OPS_TOKEN", "CHRONIR_OUTBOX_CLEANUP_INTERVAL", "CHRONIR_OUTBOX_HEARTBEAT", "CHRONIR_OUTBOX_NUMBER_AT_COMMIT",
        "CHRONIR_OUTBOX_POLL", "CHRONIR_OUTBOX_RETENTION", "CHRONIR_PEER_DISCOVERY_INTERVAL", "CHRONIR_PEER_HOST", "CHRONIR_PHOTO_SWEEP",
        "CHRONIR_PHOTO_UPLOAD_GRACE", "CHRONIR_PHOTO_UPLOADS_PER_MINUTE", "CHRONIR_PLAY_API_URL", "CHRONIR_PLAY_CREDENTIALS_FILE", "CHRONIR_PLAY_PACKAGE",
        "CHRONIR_PLAY_PUSH_TOKEN", "CHRONIR_PUBLIC_URL", "CHRONIR_PUB_BIND", "CHRONIR_PUSH_CA_FILE",
        "CHRONIR_PUSH_CONCURRENCY", "CHRONIR_PUSH_MAX_TRIES", "CHRONIR_PUSH_RETRY_BASE", "CHRONIR_PUSH_RETRY_MAX",
        "CHRONIR_REFRESH_TTL", "CHRONIR_REPLICA", "CHRONIR_REPLICAS", "CHRONIR_RESET_MAILS_PER_EMAIL_PER_HOUR", "CHRONIR_RESET_TOKEN_TTL",
        "CHRONIR_RETIRED_KEY_GRACE", "CHRONIR_RPC_BIND", "CHRONIR_RPC_CALLER_SENDS", "CHRONIR_RPC_CONCURRENCY", "CHRONIR_RPC_CONCURRENCY_PER_ACCOUNT", "CHRONIR_RPC_FRAME",
        "CHRONIR_S3_ACCESS_KEY_ID", "CHRONIR_S3_BUCKET", "CHRONIR_S3_ENDPOINT", "CHRONIR_S3_REGION",
        "CHRONIR_S3_SECRET_ACCESS_KEY", "CHRONIR_SCHEDULER_HORIZON", "CHRONIR_SCHEDULER_PARTITIONS",
        "CHRONIR_SCHEDULER_PUSH_TO", "CHRONIR_SCRYPT_LOG_N", "CHRONIR_SHUTDOWN_GRACE", "CHRONIR_SIGNING_KEY_RELOAD",
        "CHRONIR_SIGNING_KEY_RETIRE_MARGIN", "CHRONIR_SIGNING_KEY_SWEEP", "CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR",
        "CHRONIR_SMTP_CA_FILE", "CHRONIR_SMTP_URL", "CHRONIR_SSE_PING", "CHRONIR_SWEEP_INTERVAL", "CHRONIR_SWEEP_LAG", "CHRONIR_TIMER_POLL",
        "CHRONIR_TOKEN_CONFIRMS_PER_ADDRESS_PER_HOUR", "CHRONIR_TRACE_DIR", "CHRONIR_TRACE_FILE", "CHRONIR_TRACE_SAMPLE",
        "CHRONIR_UPSTREAM_TIMEOUT", "CHRONIR_VERIFY_TOKEN_TTL", "CHRONIR_WEBHOOK_ALLOW_HTTP", "CHRONIR_WEBHOOK_CONCURRENCY", "CHRONIR_WEBHOOK_PER_ACCOUNT",
        "CHRONIR_WEBHOOK_PER_DESTINATION", "CHRONIR_WEBHOOK_DEADLINE", "CHRONIR_WEBHOOK_DEFER",
        "CHRONIR_STORE_NOTIFICATIONS_REFUSED_PER_HOUR", "CHRONIR_OPS_TOKEN_FAILURES_PER_HOUR", "CHRONIR_IPV6_PREFIX_SHARE",
        "CHRONIR_ALARM_EDITS_PER_HOUR", "CHRONIR_ALARM_EDITS_PER_ALARM_PER_HOUR", "CHRONIR_ALARMS_PER_ACCOUNT", "CHRONIR_HTTP_BODY_MAX_TIME", "CHRONIR_PHOTO_UPLOADS_PER_ACCOUNT", "CHRONIR_HTTP_WRITE_TIMEOUT", "CHRONIR_OPS_IDLE_TIMEOUT",
        "CHRONIR_WEBHOOK_ALLOW_PRIVATE", "CHRONIR_WEBHOOK_SECRET", "CHRONIR_WEB_APPLE_CLIENT_ID",
        "CHRONIR_WEB_GOOGLE_CLIENT_ID", "CHRONIR_WEB_ROOT", "CHRONIR_WHEEL_TICK", "CHRONIR_ZMQ_IO_THREADS",
    ]

    /// The secrets that also take a `_FILE` form (``ServiceEnvironment/secret(_:)``; the
    /// key-encryption keys through `KeySealing`, with the same rules). `DATABASE_URL` and
    /// `PGPASSWORD` (`DATABASE_URL_FILE`, `PGPASSWORD_FILE`) are not `CHRONIR_*` names.
    public static let secrets: Set<String> = [
        "CHRONIR_ANALYTICS_KEY", "CHRONIR_KEY_ENCRYPTION_KEY", "CHRONIR_KEY_ENCRYPTION_KEY_PREVIOUS",
        "CHRONIR_OPS_TOKEN", "CHRONIR_PLAY_PUSH_TOKEN", "CHRONIR_S3_ACCESS_KEY_ID", "CHRONIR_S3_SECRET_ACCESS_KEY",
        "CHRONIR_SMTP_URL", "CHRONIR_WEBHOOK_SECRET",
    ]

    /// Names of the scripts, images and test harnesses (`scripts/`, `deploy/`, `Tests/`): no
    /// service reads them, but a service started by them has them in its environment (such as
    /// `CHRONIR_SERVICE` in the image, `CHRONIR_TRACE_UNSET` from `make run`), so they are not
    /// reported. `CHRONIR_TEST_*` names are never reported either (``ignoredPrefixes``).
    public static let tooling: Set<String> = [
        "CHRONIR_BIN_DIR", "CHRONIR_BUILD_CONFIG", "CHRONIR_BUILD_VERSION", "CHRONIR_BUS_KEYS_DIR",
        "CHRONIR_CHROMIUM", "CHRONIR_COMPOSE_PROJECT", "CHRONIR_CTL",
        "CHRONIR_DOCKERFILE", "CHRONIR_FAKE_IDP_PORT", "CHRONIR_GATEWAY_LOG_LEVEL", "CHRONIR_GATEWAY_REPLICAS", "CHRONIR_HTTP_PUBLISH", "CHRONIR_IMAGE_PREFIX",
        "CHRONIR_JAEGER_IMAGE", "CHRONIR_JAEGER_PUBLISH", "CHRONIR_OTEL_IMAGE", "CHRONIR_OTLP_ENDPOINT",
        "CHRONIR_PG_DIR", "CHRONIR_PG_OPTS", "CHRONIR_PG_PORT", "CHRONIR_PODMAN_WORK", "CHRONIR_POSTGRES_IMAGE",
        "CHRONIR_SCREENSHOTS", "CHRONIR_SECRETS_DIR", "CHRONIR_SERVICE", "CHRONIR_STOP_TIMEOUT", "CHRONIR_TRACE_UNSET",
        "CHRONIR_WEB_URL",
    ]

    /// Prefixes of names that are never reported: the test harnesses' own settings.
    public static let ignoredPrefixes = ["CHRONIR_TEST_"]

    /// The names built from a service's name (``ServiceDirectory``): `CHRONIR_<SERVICE>_RPC`,
    /// `_EVENTS` and `_REPLICAS` for each service of the suite.
    public static let perService: Set<String> = Set(ServiceDirectory.Name.allCases.flatMap { service in
        ["RPC", "EVENTS", "REPLICAS"].map { "\(service.envPrefix)_\($0)" }
    })

    /// Every `CHRONIR_*` name a service reads: ``read``, the `_FILE` forms of ``secrets`` and
    /// ``perService``.
    public static let names: Set<String> = read.union(secrets.map { "\($0)_FILE" }).union(perService)

    /// The `CHRONIR_*` names set (not empty) in `environment` that no service reads, sorted,
    /// each followed by a hint when one is likely meant: `CHRONIR_SMTP_ULR (did you mean
    /// CHRONIR_SMTP_URL?)` for a known name within two edits, or `CHRONIR_HTTP_PORT_FILE
    /// (CHRONIR_HTTP_PORT is not a secret: it has no _FILE form)`.
    public static func unknown(in environment: [String: String]) -> [String] {
        environment.compactMap { entry -> String? in
            let name = entry.key
            guard name.hasPrefix("CHRONIR_"), !entry.value.isEmpty, !isKnown(name) else { return nil }
            if name.hasSuffix("_FILE") {
                let base = String(name.dropLast("_FILE".count))
                if names.contains(base) { return "\(name) (\(base) is not a secret: it has no _FILE form)" }
            }
            guard let likely = suggestion(for: name) else { return name }
            return "\(name) (did you mean \(likely)?)"
        }.sorted()
    }

    /// Whether `name` is read by a service, set by the tooling, or under an ignored prefix.
    public static func isKnown(_ name: String) -> Bool {
        names.contains(name) || tooling.contains(name) || ignoredPrefixes.contains { name.hasPrefix($0) }
    }

    /// The known name closest to `name` within two edits (insertions, deletions, substitutions),
    /// the first in alphabetical order on a tie; nil when none is that close.
    public static func suggestion(for name: String) -> String? {
        let target = Array(name.utf8)
        var best: (distance: Int, name: String)? = nil
        for candidate in names.union(tooling) where candidate != name {
            let d = distance(target, Array(candidate.utf8), limit: 2)
            guard d <= 2 else { continue }
            if let current = best, current.distance < d || (current.distance == d && current.name < candidate) { continue }
            best = (distance: d, name: candidate)
        }
        return best?.name
    }

    /// The Levenshtein distance of `a` and `b`, or `limit + 1` when their lengths alone differ
    /// by more than `limit`.
    static func distance(_ a: [UInt8], _ b: [UInt8], limit: Int) -> Int {
        if abs(a.count - b.count) > limit { return limit + 1 }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for (i, x) in a.enumerated() {
            current[0] = i + 1
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
