import Contracts
import AsyncHTTPClient
import Foundation
import GoogleAPI
import Messaging
import NIOCore
import NIOSSL
import Outbox
import Persistence
import ServiceKit

/// The billing-entitlements service: verifies store purchases and notifications, keeps each
/// subscription's state, resolves entitlements and publishes `billing.entitlement-changed`.
public enum BillingService {
    /// The schema migrations, applied at start.
    public static let migrations = BillingMigrations.all

    /// Builds the running parts (used by `main` and by tests).
    ///
    /// Environment: `CHRONIR_APPLE_BUNDLE_ID` (default `com.chronir.app`), `CHRONIR_APPLE_ROOT_CA_FILE`
    /// (PEM; default Apple Root CA - G3), `CHRONIR_APPLE_GRACE` (16 d), `CHRONIR_GOOGLE_GRACE` (7 d),
    /// `CHRONIR_PLAY_CREDENTIALS_FILE`, `CHRONIR_PLAY_PACKAGE` (`com.chronir.app`), `CHRONIR_PLAY_API_URL`,
    /// `CHRONIR_PLAY_PUSH_TOKEN` (the RTDN push endpoint's `?token=`), `CHRONIR_PUSH_CA_FILE`,
    /// `CHRONIR_ENTITLEMENT_SWEEP` (30 s).
    public static func build(runtime: ServiceRuntime, database: Database, parts: ServiceParts) async throws -> ServiceParts {
        var parts = parts
        let env = runtime.environment
        let roots: [String]
        if let file = env.optional("CHRONIR_APPLE_ROOT_CA_FILE") {
            guard let pem = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw ServiceEnvironment.Invalid("CHRONIR_APPLE_ROOT_CA_FILE: cannot read \(file)")
            }
            roots = [pem]
        } else {
            roots = [AppleRootCA.g3]
        }
        let apple: AppleVerifier
        do {
            apple = try AppleVerifier(rootPEMs: roots, bundleId: env.string("CHRONIR_APPLE_BUNDLE_ID", "com.chronir.app"))
        } catch {
            throw ServiceEnvironment.Invalid("the App Store root certificate is unusable: \(error)")
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        if let file = env.optional("CHRONIR_PUSH_CA_FILE") {
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(file))]
        }
        let http = runtime.owning(HTTPClient(eventLoopGroup: runtime.eventLoopGroup, configuration: .init(tlsConfiguration: tls)), "http client") {
            try? await $0.shutdown()
        }
        var play: PlayClient? = nil
        if let file = env.optional("CHRONIR_PLAY_CREDENTIALS_FILE") {
            do {
                let account = try JSONDecoder().decode(GoogleOAuth.ServiceAccount.self, from: Data(contentsOf: URL(fileURLWithPath: file)))
                play = PlayClient(baseURL: env.string("CHRONIR_PLAY_API_URL", "https://androidpublisher.googleapis.com"),
                                  packageName: env.string("CHRONIR_PLAY_PACKAGE", "com.chronir.app"),
                                  oauth: try await GoogleOAuth(account: account, scope: PlayClient.scope, client: http), client: http)
            } catch {
                try? await http.shutdown()
                throw ServiceEnvironment.Invalid("CHRONIR_PLAY_CREDENTIALS_FILE: \(error)")
            }
        }
        let appleGrace = Double(try env.duration("CHRONIR_APPLE_GRACE", .seconds(16 * 86_400)).components.seconds)
        let googleGrace = Double(try env.duration("CHRONIR_GOOGLE_GRACE", .seconds(7 * 86_400)).components.seconds)
        var router = RPCRouter()
        let outbox = try runtime.makePublishedOutbox(database: database, router: &router)
        let store = SubscriptionStore(database: database, outbox: outbox.writer)
        BillingHandlers(store: store, apple: apple, play: play, appleGrace: appleGrace, googleGrace: googleGrace,
                        googlePushToken: try env.secret("CHRONIR_PLAY_PUSH_TOKEN"), logger: runtime.logs.logger("billing")).register(into: &router)
        let alarms = try runtime.rpcClient(to: .alarms)
        let snoozes = SnoozeLedgerStore(database: database)
        SnoozeLedgerHandlers(store: snoozes, apple: apple, alarms: alarms).register(into: &router)
        let accounts = try runtime.makeSubscriber(to: .accounts, handlers: AccountDeletionHandlers(subscriptions: store, snoozes: snoozes).handlers,
                                                  database: database, wakes: outbox.writer)
        parts.services.append(outbox.relay)
        parts.services.append(accounts.subscriber)
        let sweeper = EntitlementSweeper(store: store, appleGrace: appleGrace, googleGrace: googleGrace, logger: runtime.logs.logger("entitlements"))
        parts.services.append(PeriodicService("entitlement sweep", every: try env.duration("CHRONIR_ENTITLEMENT_SWEEP", .seconds(30)),
                                              logger: runtime.logs.logger("entitlements")) { _ = try await sweeper.sweep() })
        try runtime.exporter(database: database, sections: BillingExport.sections).register(ExportMethods.Billing.self, in: &router)
        parts.services.append(try runtime.makeRPCServer(router: router, health: parts.health))
        return parts
    }
}
