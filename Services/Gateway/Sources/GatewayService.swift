import Contracts
import Foundation
import Hummingbird
import Messaging
import NIOCore
import Persistence
import ServiceKit
import ServiceLifecycle

/// The public HTTP API: authenticates callers and translates requests into messages to the
/// services that own the data.
public enum GatewayService {
    /// Builds the running parts (used by `main`, and by the tests with `GatewayConfig(environment:)`)
    /// with settings already read and checked.
    /// `onListening` receives the bound HTTP port once the server accepts connections.
    /// `health`: the host's checks (the gateway's own readiness on `/readyz`).
    public static func build(runtime: ServiceRuntime, health: HealthChecks = HealthChecks(), config: GatewayConfig,
                             onListening: (@Sendable (Int) -> Void)? = nil) throws -> ServiceParts {
        var parts = ServiceParts(health: health)
        let clients = try GatewayClients(runtime: runtime, timeout: config.upstreamTimeout)
        let revocations = RevocationList(accounts: clients.accounts, accessTTL: config.accessTTL)
        // A key accounts stops publishing is trusted for the longest token lifetime (and a minute) more.
        let verifier = TokenVerifier(accounts: clients.accounts, revocations: revocations, logger: runtime.logger,
                                     retiredKeyGrace: config.retiredKeyGrace, periodicRefresh: config.keyRefresh)
        let throttleState: any ThrottleState = config.sharedThrottle
            ? SharedThrottleState(accounts: clients.accounts, telemetry: runtime.telemetry) : LocalThrottleState()
        let gateway = Gateway(clients: clients, verifier: verifier, telemetry: runtime.telemetry,
                              throttle: AuthThrottle(limits: config.limits, state: throttleState), addresses: config.clientAddresses)

        let hub = LiveHub(notifications: clients.notifications, telemetry: runtime.telemetry, perUser: config.liveStreamsPerAccount,
                          buffer: config.liveBuffer, writeDelay: config.liveWriteDelay,
                          clock: LiveClock(ahead: config.clockAhead), clockInterval: config.clockCheckInterval)
        let router = routes(gateway, hub: hub, runtime: runtime, health: health, config: config)
        let app = application(router, runtime: runtime, config: config, onListening: onListening)
        let consumer = StreamConsumer(stream: ServiceDirectory.Name.accounts.rawValue, applier: revocations,
                                      replaySource: RPCReplaySource(client: clients.accounts), telemetry: runtime.telemetry,
                                      silence: runtime.consumerSilence())
        let subscriber = try EventSubscriber(context: runtime.zmq, name: "accounts", endpoints: runtime.directory.events(.accounts),
                                             consumers: [consumer], telemetry: runtime.telemetry)
        let live = StreamConsumer(stream: ServiceDirectory.Name.notifications.rawValue, applier: hub,
                                  replaySource: RPCReplaySource(client: clients.notifications), telemetry: runtime.telemetry,
                                  silence: runtime.consumerSilence())
        let liveSubscriber = try EventSubscriber(context: runtime.zmq, name: "notifications", endpoints: runtime.directory.events(.notifications),
                                                 consumers: [live], telemetry: runtime.telemetry)
        runtime.consumers.add(consumer)
        runtime.consumers.add(live)
        parts.services.append(KeyLoader(verifier: verifier))
        parts.services.append(subscriber)
        parts.services.append(liveSubscriber)
        parts.services.append(hub)
        let telemetry = runtime.telemetry
        parts.services.append(PeriodicService("live ping", every: config.ssePing, logger: runtime.logger) {
            // Streams of signed-out sessions and expired tokens end before the keep-alive.
            hub.endSignedOut(isRevoked: revocations.isRevoked)
            hub.ping()
            telemetry.gauge("chronir_gateway_live_connections").record(hub.count)
            telemetry.gauge("chronir_gateway_live_waiting").record(hub.waiting)
        })
        parts.services.append(app)
        return parts
    }

    /// Every route of the public API, the web client and the operations page, behind the
    /// middleware (security headers, telemetry, errors).
    static func routes(_ gateway: Gateway, hub: LiveHub, runtime: ServiceRuntime, health: HealthChecks,
                       config: GatewayConfig) -> Router<GatewayContext> {
        let router = Router(context: GatewayContext.self)
        router.add(middleware: SecurityHeadersMiddleware(hsts: config.publicURL?.lowercased().hasPrefix("https://") == true))
        router.add(middleware: TelemetryMiddleware(telemetry: runtime.telemetry, access: runtime.logs.logger("access")))
        let allowed = AllowedMethods()
        let recent = RecentErrors()
        router.add(middleware: ErrorMiddleware(allowed: allowed, recent: recent))
        AuthRoutes.add(to: router, gateway: gateway)
        WebSignIn.add(to: router, signIn: config.webSignIn)
        MeRoutes.add(to: router, gateway: gateway)
        SignInRoutes.add(to: router, gateway: gateway)
        ExportRoutes.add(to: router, gateway: gateway, writeTimeout: config.httpWriteTimeout)
        CalendarFeedRoutes.add(to: router, gateway: gateway, publicURL: config.publicURL)
        AlarmRoutes.add(to: router, gateway: gateway)
        PhotoRoutes.add(to: router, gateway: gateway, concurrentUploads: config.photoUploads, uploadsPerAccount: config.photoUploadsPerAccount)
        AnalyticsRoutes.add(to: router, gateway: gateway)
        HealthRoutes.add(to: router, gateway: gateway, health: health, runtime: runtime, opsToken: config.opsToken, logger: runtime.logs.logger("ops"))
        GroupRoutes.add(to: router, gateway: gateway)
        InvitationRoutes.add(to: router, gateway: gateway)
        BillingRoutes.add(to: router, gateway: gateway, logger: runtime.logs.logger("webhooks"))
        NotificationRoutes.add(to: router, gateway: gateway, hub: hub, writeTimeout: config.httpWriteTimeout)
        OpsRoutes.add(to: router, gateway: gateway, token: config.opsToken, recent: recent, logger: runtime.logs.logger("ops"))
        // The web client and the operations page (CHRONIR_WEB_ROOT; `web/` of the checkout by
        // default), read with the configuration.
        if config.webFiles.isEmpty { runtime.logger.notice("no web client under \(config.webRoot) (CHRONIR_WEB_ROOT): /app/ and /ops/ are off") }
        WebRoutes.add(to: router, files: config.webFiles)
        allowed.load(from: router)
        return router
    }

    /// The HTTP server over `router`: its accept queue, connection limits, body deadlines and
    /// idle timeout.
    static func application(_ router: Router<GatewayContext>, runtime: ServiceRuntime, config: GatewayConfig,
                            onListening: (@Sendable (Int) -> Void)?) -> some ApplicationProtocol {
        let host = config.httpHost
        let port = config.httpPort
        // The queue of connections not yet accepted. Hummingbird's 256 overflowed in a load run's
        // burst (TcpExtListenOverflows: 944 handshakes dropped): a client whose handshake was
        // dropped while it already sent its request can see the connection reset. The kernel
        // caps it at net.core.somaxconn.
        let backlog = config.httpBacklog
        // A connection is closed when it has been idle this long (CHRONIR_HTTP_IDLE_TIMEOUT; 0
        // turns it off): no request since it opened or since the last answer, or a request's
        // body stalling. Hummingbird has no separate header timeout, but this one covers a slow
        // header (slowloris): bytes of an unfinished head yield no HTTP part, so they do not
        // reset the timer of its HTTPConnectionStateHandler, and the connection closes this long
        // after it opened however the bytes trickle. While an answer is being written (a live
        // stream) the timer does nothing. 75 s, longer than the 60 s a client pool (such as
        // AsyncHTTPClient's) keeps an idle connection, so the client lets go first and never
        // sends a request on a connection the server is closing.
        let idle = config.httpIdleTimeout
        let connectionLimit = ConnectionLimit(perAddress: config.connectionsPerAddress, telemetry: runtime.telemetry,
                                              addresses: config.clientAddresses)
        let bodyDeadline = BodyDeadline(base: config.httpBodyTimeout, minRate: config.httpBodyMinRate, ceiling: config.httpBodyMaxTime,
                                        telemetry: runtime.telemetry)
        let logger = runtime.logs.logger("http")
        return Application(
            router: router,
            server: .http1(configuration: .init(additionalChannelHandlers: connectionLimit.handlers() + bodyDeadline.handlers(),
                                                idleTimeout: idle > .zero ? TimeAmount(idle) : nil)),
            configuration: .init(address: .hostname(host, port: port), serverName: "chronir-gateway", backlog: backlog),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                logger.notice("listening on http://127.0.0.1:\(bound)")
                onListening?(bound)
            },
            eventLoopGroupProvider: .shared(runtime.eventLoopGroup),
            logger: logger
        )
    }
}

/// Loads the token keys in the background at start.
struct KeyLoader: Service {
    let verifier: TokenVerifier
    func run() async throws {
        await cancelWhenGracefulShutdown { await verifier.loadKeys() }
        try? await gracefulShutdown()
    }
}
