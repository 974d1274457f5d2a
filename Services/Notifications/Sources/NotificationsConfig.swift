import AsyncHTTPClient
import Contracts
import Crypto
import Foundation
import GoogleAPI
import NIOCore
import NIOSSL
import ServiceKit

/// The notifications service's settings (environment). A provider without its settings is not
/// configured: pushes for it fail with a logged reason and the inbox and live stream still work.
struct NotificationsConfig: Sendable {
    /// APNs: `CHRONIR_APNS_URL` (default `https://api.push.apple.com`), `CHRONIR_APNS_TOPIC`,
    /// `CHRONIR_APNS_TEAM_ID`, `CHRONIR_APNS_KEY_ID`, `CHRONIR_APNS_KEY_FILE` (the `.p8`).
    var apns: APNsProvider.Configuration?
    /// FCM: `CHRONIR_FCM_CREDENTIALS_FILE` (service-account JSON), `CHRONIR_FCM_URL`
    /// (default `https://fcm.googleapis.com`), `CHRONIR_FCM_PROJECT_ID` (default: the file's).
    var fcmAccount: GoogleOAuth.ServiceAccount?
    var fcmURL: String
    var fcmProject: String?
    /// Webhooks: `CHRONIR_WEBHOOK_SECRET` (HMAC key), `CHRONIR_WEBHOOK_ALLOW_HTTP` (default false).
    var webhookSecret: String?
    var webhookAllowHTTP: Bool
    /// `CHRONIR_WEBHOOK_ALLOW_PRIVATE` (default false): deliver webhooks to loopback, private and
    /// other internal addresses too (local development and tests; see ``WebhookClients``).
    var webhookAllowPrivate: Bool
    /// `CHRONIR_PUSH_CA_FILE`: extra trusted CA certificates (PEM) for provider connections.
    var extraCAFile: String?
    /// `CHRONIR_PUSH_RETRY_BASE` (1 s), `CHRONIR_PUSH_RETRY_MAX` (60 s), `CHRONIR_PUSH_MAX_TRIES` (5).
    var retry: RetryPolicy
    /// `CHRONIR_PUSH_CONCURRENCY` (64) sends in flight; `CHRONIR_DELIVERY_POLL` (100 ms).
    var concurrency: Int
    var poll: Duration
    /// `CHRONIR_INBOX_RETENTION` (30 d), swept at start and every `CHRONIR_INBOX_SWEEP_INTERVAL` (1 h).
    var retention: Duration
    var retentionSweep: Duration

    init(environment e: ServiceEnvironment) throws {
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
        poll = try e.duration("CHRONIR_DELIVERY_POLL", .milliseconds(100))
        retention = try e.duration("CHRONIR_INBOX_RETENTION", .seconds(30 * 86_400))
        retentionSweep = try e.duration("CHRONIR_INBOX_SWEEP_INTERVAL", .seconds(3600))
        guard retentionSweep > .zero else { throw ServiceEnvironment.Invalid("CHRONIR_INBOX_SWEEP_INTERVAL must be more than 0") }
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
        let configuration = WebhookClients.configuration(tls: try makeTLSConfiguration(), concurrency: concurrency)
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
                                                                           allowHTTP: webhookAllowHTTP)
        }
        return providers
    }
}
