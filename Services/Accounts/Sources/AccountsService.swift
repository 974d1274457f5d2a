import AsyncHTTPClient
import Contracts
import Foundation
import Logging
import Messaging
import NIOPosix
import Persistence
import ServiceKit

/// The accounts service: users, credentials, sessions and tokens, devices, settings.
public enum AccountsService: ChronirService {
    /// The service's name (``ChronirService/name``).
    public static let name = "accounts"
    /// The schema migrations, applied at start.
    public static let migrations = AccountsMigrations.all

    /// Builds the running parts with `config` (used by `main`).
    public static func build(runtime: ServiceRuntime, database: Database, parts: ServiceParts, config: AccountsConfig) async throws -> ServiceParts {
        var parts = parts
        let pool = runtime.owning(NIOThreadPool(numberOfThreads: config.hashThreads), "hashing threads") {
            try? await $0.shutdownGracefully()
        }
        pool.start()
        let issuer = try await TokenIssuer.load(
            database: database, accessTTL: config.accessTTL,
            sealing: config.keySealing, logger: runtime.logs.logger("signing-keys"),
            retireMargin: config.signingKeyRetireMargin,
            reload: config.signingKeyReload)
        var router = RPCRouter()
        let outbox = try runtime.makePublishedOutbox(database: database, router: &router)
        let http = runtime.owning(HTTPClient(eventLoopGroup: runtime.eventLoopGroup), "http client") { try? await $0.shutdown() }
        let identities = identityTokens(config: config, http: http, logger: runtime.logs.logger("identity"))
        let handlers = AccountsHandlers(
            store: AccountsStore(database: database),
            hasher: PasswordHasher(logN: config.scryptLogN, pool: pool, queueLimit: config.hashQueue),
            issuer: issuer, outbox: outbox.writer,
            refreshTTL: config.refreshTTL,
            identities: identities,
            mails: AccountMails(publicURL: config.publicURL,
                                resetTTL: config.resetTokenTTL,
                                verifyTTL: config.verifyTokenTTL),
            allowPrivateWebhooks: config.allowPrivateWebhooks
        )
        handlers.register(into: &router)
        GroupHandlers(store: handlers.groups, accounts: handlers.store).register(into: &router)
        let throttle = ThrottleHandlers(database: database)
        throttle.register(into: &router)
        let billing = try runtime.makeSubscriber(to: .billing, handlers: handlers.billing, database: database, wakes: outbox.writer)
        let smtp = try config.mail.client(eventLoopGroup: runtime.eventLoopGroup)
        if smtp == nil { runtime.logger.warning("CHRONIR_SMTP_URL is not set: password-reset and verification mails wait in mail_outbox") }
        let sender = MailSender(database: database, smtp: smtp, logger: runtime.logs.logger("mail"))
        parts.services.append(PeriodicService("mail sender", every: config.mail.poll,
                                              logger: runtime.logs.logger("mail")) { try await sender.sendDue() })
        // Keys a rotation replaced are retired once the longest token lifetime has passed.
        parts.services.append(PeriodicService("signing key retirement", every: config.signingKeySweep,
                                              logger: runtime.logs.logger("signing-keys")) { try await issuer.retireDue() })
        parts.services.append(PeriodicService("throttle sweep", every: .seconds(3600), logger: runtime.logger) { try await throttle.sweep() })
        parts.services.append(outbox.relay)
        parts.services.append(billing.subscriber)
        runtime.exporter(database: database, sections: AccountsExport.sections).register(ExportMethods.Accounts.self, in: &router)
        parts.services.append(try runtime.makeRPCServer(router: router, health: parts.health))
        return parts
    }

    /// Sign in with Apple and Google, as ``AccountsConfig`` says: the providers' JWKS URLs
    /// (`CHRONIR_APPLE_JWKS_URL` / `CHRONIR_GOOGLE_JWKS_URL`), their audiences
    /// (`CHRONIR_APPLE_AUDIENCES` / `CHRONIR_GOOGLE_AUDIENCES`; a provider without audiences is
    /// answered 404 CA017: not enabled) and the clock skew (`CHRONIR_IDENTITY_TOKEN_SKEW`).
    static func identityTokens(config: AccountsConfig, http: HTTPClient, logger: Logger) -> IdentityTokens {
        let apple = ProviderKeys(url: config.appleJWKSURL, http: http, logger: logger)
        let google = ProviderKeys(url: config.googleJWKSURL, http: http, logger: logger)
        return IdentityTokens(
            providers: [
                "apple": .init(name: "apple", issuers: ["https://appleid.apple.com"], audiences: config.appleAudiences, keys: apple),
                "google": .init(name: "google", issuers: ["https://accounts.google.com", "accounts.google.com"],
                                audiences: config.googleAudiences, keys: google),
            ],
            skew: Double(config.identityTokenSkew.components.seconds),
            logger: logger)
    }
}
