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
public enum BillingService: ChronirService {
    /// The service's name (``ChronirService/name``).
    public static let name = "billing"
    /// The schema migrations, applied at start.
    public static let migrations = BillingMigrations.all

    /// Builds the running parts with the service's settings (used by `main`, which reads
    /// `config` before anything connects).
    public static func build(runtime: ServiceRuntime, database: Database, parts: ServiceParts, config: BillingConfig) async throws -> ServiceParts {
        var parts = parts
        let apple = try config.makeAppleVerifier()
        var tls = TLSConfiguration.makeClientConfiguration()
        if let certificates = config.extraTrustRoots {
            tls.additionalTrustRoots = [.certificates(certificates)]
        }
        let http = runtime.owning(HTTPClient(eventLoopGroup: runtime.eventLoopGroup, configuration: .init(tlsConfiguration: tls)), "http client") {
            try? await $0.shutdown()
        }
        var play: PlayClient? = nil
        if let account = config.playAccount {
            do {
                play = PlayClient(baseURL: config.playAPIURL, packageName: config.playPackage,
                                  oauth: try await GoogleOAuth(account: account, scope: PlayClient.scope, client: http), client: http)
            } catch {
                try? await http.shutdown()
                throw ServiceEnvironment.Invalid("CHRONIR_PLAY_CREDENTIALS_FILE: \(error)")
            }
        }
        let appleGrace = Double(config.appleGrace.components.seconds)
        let googleGrace = Double(config.googleGrace.components.seconds)
        var router = RPCRouter()
        let outbox = try runtime.makePublishedOutbox(database: database, router: &router)
        let store = SubscriptionStore(database: database, outbox: outbox.writer)
        BillingHandlers(store: store, apple: apple, play: play, appleGrace: appleGrace, googleGrace: googleGrace,
                        googlePushToken: config.playPushToken, logger: runtime.logs.logger("billing")).register(into: &router)
        let alarms = try runtime.rpcClient(to: .alarms)
        let snoozes = SnoozeLedgerStore(database: database)
        SnoozeLedgerHandlers(store: snoozes, apple: apple, play: play, charity: config.charity, alarms: alarms).register(into: &router)
        let accounts = try runtime.makeSubscriber(to: .accounts, handlers: AccountDeletionHandlers(subscriptions: store, snoozes: snoozes).handlers,
                                                  database: database, wakes: outbox.writer)
        parts.services.append(outbox.relay)
        parts.services.append(accounts.subscriber)
        let sweeper = EntitlementSweeper(store: store, appleGrace: appleGrace, googleGrace: googleGrace, logger: runtime.logs.logger("entitlements"))
        parts.services.append(PeriodicService("entitlement sweep", every: config.entitlementSweep,
                                              logger: runtime.logs.logger("entitlements")) { _ = try await sweeper.sweep() })
        runtime.exporter(database: database, sections: BillingExport.sections).register(ExportMethods.Billing.self, in: &router)
        parts.services.append(try runtime.makeRPCServer(router: router, health: parts.health))
        return parts
    }
}
