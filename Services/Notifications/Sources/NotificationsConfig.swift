import AsyncHTTPClient
import Contracts
import Crypto
import Foundation
import GoogleAPI
import NIOCore
import NotificationsCore
import NIOSSL
import ServiceKit

/// The notifications service's settings: every `CHRONIR_*` variable it reads beyond the ones
/// every service reads (``ServiceRuntime``), parsed and validated before anything connects. A
/// provider without its settings is not configured: pushes for it fail with a logged reason
/// and the inbox and live stream still work.
public struct NotificationsConfig: ServiceConfig {
    /// APNs, configured when `CHRONIR_APNS_KEY_FILE` (the `.p8`, default unset: no APNs) is
    /// set: then `CHRONIR_APNS_TOPIC`, `CHRONIR_APNS_TEAM_ID` and `CHRONIR_APNS_KEY_ID` are
    /// required, and `CHRONIR_APNS_URL` defaults to `https://api.push.apple.com`.
    var apns: APNsProvider.Configuration?
    /// FCM's service account, read from `CHRONIR_FCM_CREDENTIALS_FILE` (service-account JSON;
    /// default unset: no FCM).
    public var fcmAccount: GoogleOAuth.ServiceAccount?
    /// FCM's base URL (`CHRONIR_FCM_URL`, default `https://fcm.googleapis.com`).
    public var fcmURL: String
    /// FCM's project (`CHRONIR_FCM_PROJECT_ID`, default the credentials file's `project_id`;
    /// required with FCM when the file has none).
    public var fcmProject: String?
    /// The webhooks' HMAC key (`CHRONIR_WEBHOOK_SECRET` or `CHRONIR_WEBHOOK_SECRET_FILE`;
    /// default unset: no webhooks).
    public var webhookSecret: String?
    /// Webhooks may go to `http://` URLs (`CHRONIR_WEBHOOK_ALLOW_HTTP`, default false).
    public var webhookAllowHTTP: Bool
    /// `CHRONIR_WEBHOOK_ALLOW_PRIVATE` (default false): deliver webhooks to loopback, private and
    /// other internal addresses too (local development and tests; see ``WebhookClients``).
    public var webhookAllowPrivate: Bool
    /// `CHRONIR_PUSH_CA_FILE` (default unset: the system's roots only): extra trusted CA
    /// certificates (PEM) for provider connections.
    public var extraCAFile: String?
    /// Push retries: `CHRONIR_PUSH_RETRY_BASE` (default 1 s), `CHRONIR_PUSH_RETRY_MAX` (default
    /// 60 s), `CHRONIR_PUSH_MAX_TRIES` (default 5, 1…100).
    var retry: RetryPolicy
    /// APNs and FCM sends in flight at once (`CHRONIR_PUSH_CONCURRENCY`, default 64, 1…10 000).
    public var concurrency: Int
    /// Webhook sends in flight at once, apart from APNs and FCM (`CHRONIR_WEBHOOK_CONCURRENCY`,
    /// default 16, 1…1 000), of which at most `CHRONIR_WEBHOOK_PER_ACCOUNT` (default 2, 1…100)
    /// for one account and `CHRONIR_WEBHOOK_PER_DESTINATION` (default 4, 1…1 000) to one host.
    public var webhookConcurrency: Int
    public var webhooksPerAccount: Int
    public var webhooksPerDestination: Int
    /// The most one webhook send may take, head to body (`CHRONIR_WEBHOOK_DEADLINE`, default
    /// 10 s, 1 to 30 s: a claimed delivery's lease is 60 s, and no send may outlive it).
    public var webhookDeadline: Duration
    /// How long a webhook that found no slot waits before it is claimed again
    /// (`CHRONIR_WEBHOOK_DEFER`, default 1 s, 100 ms to 60 s).
    public var webhookDefer: Duration
    /// How often due deliveries are looked for (`CHRONIR_DELIVERY_POLL`, default 100 ms).
    public var poll: Duration
    /// How long inbox entries are kept (`CHRONIR_INBOX_RETENTION`, default 30 days).
    public var retention: Duration
    /// How often old inbox entries are swept, besides at start (`CHRONIR_INBOX_SWEEP_INTERVAL`,
    /// default 1 h; more than 0).
    public var retentionSweep: Duration
    /// Fault tests only (`CHRONIR_FAILPOINT_CLOCK_AHEAD`, a duration; default 0): this service
    /// reads its host's wall clock that far ahead, as a host whose NTP stopped would. Nothing
    /// that decides when a notification may be seen reads that clock (the database's decides).
    public var clockAhead: Duration

    public init(environment e: ServiceEnvironment) throws {
        if let keyFile = e.optional("CHRONIR_APNS_KEY_FILE") {
            apns = APNsProvider.Configuration(
                baseURL: e.string("CHRONIR_APNS_URL", "https://api.push.apple.com"),
                topic: try e.required("CHRONIR_APNS_TOPIC"), teamId: try e.required("CHRONIR_APNS_TEAM_ID"),
                keyId: try e.required("CHRONIR_APNS_KEY_ID"), privateKeyPEM: try Self.read(keyFile, "CHRONIR_APNS_KEY_FILE"))
        }
        if let file = e.optional("CHRONIR_FCM_CREDENTIALS_FILE") {
            do {
                fcmAccount = try JSONDecoder().decode(GoogleOAuth.ServiceAccount.self, from: Data(try Self.read(file, "CHRONIR_FCM_CREDENTIALS_FILE").utf8))
            } catch let error as ServiceEnvironment.Invalid {
                throw error
            } catch {
                throw ServiceEnvironment.Invalid("CHRONIR_FCM_CREDENTIALS_FILE is not a service-account JSON file: \(error)")
            }
        }
        fcmURL = e.string("CHRONIR_FCM_URL", "https://fcm.googleapis.com")
        fcmProject = e.optional("CHRONIR_FCM_PROJECT_ID") ?? fcmAccount?.project_id
        if fcmAccount != nil, fcmProject == nil {
            throw ServiceEnvironment.Invalid("CHRONIR_FCM_PROJECT_ID is needed (the credentials file has no project_id)")
        }
        webhookSecret = try e.secret("CHRONIR_WEBHOOK_SECRET")
        webhookAllowHTTP = try e.bool("CHRONIR_WEBHOOK_ALLOW_HTTP", false)
        webhookAllowPrivate = try e.bool("CHRONIR_WEBHOOK_ALLOW_PRIVATE", false)
        extraCAFile = e.optional("CHRONIR_PUSH_CA_FILE")
        retry = RetryPolicy(base: try e.duration("CHRONIR_PUSH_RETRY_BASE", .seconds(1)), max: try e.duration("CHRONIR_PUSH_RETRY_MAX", .seconds(60)),
                            tries: try e.int("CHRONIR_PUSH_MAX_TRIES", 5, in: 1...100))
        concurrency = try e.int("CHRONIR_PUSH_CONCURRENCY", 64, in: 1...10_000)
        webhookConcurrency = try e.int("CHRONIR_WEBHOOK_CONCURRENCY", 16, in: 1...1_000)
        webhooksPerAccount = try e.int("CHRONIR_WEBHOOK_PER_ACCOUNT", 2, in: 1...100)
        webhooksPerDestination = try e.int("CHRONIR_WEBHOOK_PER_DESTINATION", 4, in: 1...1_000)
        webhookDeadline = try e.duration("CHRONIR_WEBHOOK_DEADLINE", .seconds(10))
        guard webhookDeadline >= .seconds(1), webhookDeadline <= .seconds(30) else {
            throw ServiceEnvironment.Invalid("CHRONIR_WEBHOOK_DEADLINE must be 1 to 30 seconds (a claimed delivery's lease is 60 s)")
        }
        webhookDefer = try e.duration("CHRONIR_WEBHOOK_DEFER", .seconds(1))
        guard webhookDefer >= .milliseconds(100), webhookDefer <= .seconds(60) else {
            throw ServiceEnvironment.Invalid("CHRONIR_WEBHOOK_DEFER must be 100 ms to 60 s")
        }
        poll = try e.duration("CHRONIR_DELIVERY_POLL", .milliseconds(100))
        retention = try e.duration("CHRONIR_INBOX_RETENTION", .seconds(30 * 86_400))
        retentionSweep = try e.duration("CHRONIR_INBOX_SWEEP_INTERVAL", .seconds(3600))
        guard retentionSweep > .zero else { throw ServiceEnvironment.Invalid("CHRONIR_INBOX_SWEEP_INTERVAL must be more than 0") }
        clockAhead = try e.duration("CHRONIR_FAILPOINT_CLOCK_AHEAD", .zero)
    }

    /// This host's wall clock (skewed by ``clockAhead``): for what only orders or wakes work.
    var hostClock: @Sendable () -> Date {
        let ahead = Double(clockAhead.components.seconds) + Double(clockAhead.components.attoseconds) / 1e18
        return { Date().addingTimeInterval(ahead) }
    }

    /// The slots of sends (``SendLanes``).
    var sendLimits: SendLanes.Limits {
        SendLanes.Limits(providers: concurrency, webhooks: webhookConcurrency, webhooksPerAccount: webhooksPerAccount,
                         webhooksPerDestination: webhooksPerDestination)
    }

    static func read(_ path: String, _ key: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ServiceEnvironment.Invalid("\(key): cannot read \(path)")
        }
        return text
    }

    /// The TLS settings of provider connections: the system's roots and `CHRONIR_PUSH_CA_FILE`'s.
    func makeTLSConfiguration() throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let file = extraCAFile {
            do {
                tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(file))]
            } catch {
                throw ServiceEnvironment.Invalid("CHRONIR_PUSH_CA_FILE: cannot read certificates from \(file): \(error)")
            }
        }
        return tls
    }

    /// The HTTP client for APNs and FCM (HTTP/2 where the server offers it, as APNs does).
    /// Webhooks have clients of their own (``makeWebhookClients(eventLoopGroup:)``).
    func makeHTTPClient(eventLoopGroup: any EventLoopGroup) throws -> HTTPClient {
        var configuration = HTTPClient.Configuration(tlsConfiguration: try makeTLSConfiguration())
        configuration.httpVersion = .automatic
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(32, concurrency))
        return HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
    }

    /// The webhook clients (no redirects, short timeouts, destinations checked unless
    /// ``webhookAllowPrivate``), or nil when webhooks are not configured. Shut them down.
    func makeWebhookClients(eventLoopGroup: any EventLoopGroup) throws -> WebhookClients? {
        guard webhookSecret != nil else { return nil }
        let configuration = WebhookClients.configuration(tls: try makeTLSConfiguration(), concurrency: webhookConcurrency)
        return WebhookClients(eventLoopGroup: eventLoopGroup, configuration: configuration, allowPrivate: webhookAllowPrivate)
    }

    /// The configured providers by name: APNs and FCM on `client`, webhooks on `webhooks`.
    func makeProviders(client: HTTPClient, webhooks: WebhookClients?) async throws -> [String: any PushProvider] {
        var providers: [String: any PushProvider] = [:]
        if let apns { providers[PushProviderKind.apns.rawValue] = try await APNsProvider(configuration: apns, client: client) }
        if let account = fcmAccount, let project = fcmProject {
            let oauth = try await GoogleOAuth(account: account, scope: FCMProvider.scope, client: client)
            providers[PushProviderKind.fcm.rawValue] = FCMProvider(baseURL: fcmURL, projectId: project, oauth: oauth, client: client)
        }
        if let secret = webhookSecret, let webhooks {
            providers[PushProviderKind.webhook.rawValue] = WebhookProvider(secret: SymmetricKey(data: Data(secret.utf8)), clients: webhooks,
                                                                           allowHTTP: webhookAllowHTTP, deadline: webhookDeadline)
        }
        return providers
    }
}
