import AsyncHTTPClient
import Contracts
import Foundation
import Logging
import Messaging
import NIOPosix
import Persistence
import ServiceKit

/// The accounts service: users, credentials, sessions and tokens, devices, settings.
public enum AccountsService {
    /// The schema migrations, applied at start.
    public static let migrations = AccountsMigrations.all

    /// Builds the running parts (used by `main` and by tests).
    public static func build(runtime: ServiceRuntime, database: Database, parts: ServiceParts) async throws -> ServiceParts {
        var parts = parts
        let env = runtime.environment
        let pool = runtime.owning(NIOThreadPool(numberOfThreads: try env.int("CHRONIR_HASH_THREADS", 2, in: 1...64)), "hashing threads") {
            try? await $0.shutdownGracefully()
        }
        pool.start()
        let issuer = try await TokenIssuer.load(
            database: database, accessTTL: try env.duration("CHRONIR_ACCESS_TTL", .seconds(3600)),
            sealing: try KeySealing.from(env), logger: runtime.logs.logger("signing-keys"),
            retireMargin: try env.duration("CHRONIR_SIGNING_KEY_RETIRE_MARGIN", .seconds(60)),
            reload: try env.duration("CHRONIR_SIGNING_KEY_RELOAD", .seconds(5)))
        var router = RPCRouter()
        let outbox = try runtime.makePublishedOutbox(database: database, router: &router)
        let http = runtime.owning(HTTPClient(eventLoopGroup: runtime.eventLoopGroup), "http client") { try? await $0.shutdown() }
        let identities = try identityTokens(env: env, http: http, logger: runtime.logs.logger("identity"))
        let handlers = AccountsHandlers(
            store: AccountsStore(database: database),
            hasher: PasswordHasher(logN: try env.int("CHRONIR_SCRYPT_LOG_N", 15, in: 4...20), pool: pool),
            issuer: issuer, outbox: outbox.writer,
            refreshTTL: try env.duration("CHRONIR_REFRESH_TTL", .seconds(30 * 86_400)),
            identities: identities,
            mails: AccountMails(publicURL: env.string("CHRONIR_PUBLIC_URL", "http://localhost:8080"),
                                resetTTL: try env.duration("CHRONIR_RESET_TOKEN_TTL", .seconds(3600)),
                                verifyTTL: try env.duration("CHRONIR_VERIFY_TOKEN_TTL", .seconds(48 * 3600))),
            allowPrivateWebhooks: try env.bool("CHRONIR_WEBHOOK_ALLOW_PRIVATE", false)
        )
        handlers.register(into: &router)
        GroupHandlers(store: handlers.groups, accounts: handlers.store).register(into: &router)
        let billing = try runtime.makeSubscriber(to: .billing, handlers: handlers.billing, database: database, wakes: outbox.writer)
        let smtp = try env.secret("CHRONIR_SMTP_URL").map {
            try SMTPClient(url: $0, from: env.string("CHRONIR_MAIL_FROM", "no-reply@chronir.app"))
        }
        if smtp == nil { runtime.logger.warning("CHRONIR_SMTP_URL is not set: password-reset and verification mails wait in mail_outbox") }
        let sender = MailSender(database: database, smtp: smtp, pool: pool, logger: runtime.logs.logger("mail"))
        parts.services.append(PeriodicService("mail sender", every: try env.duration("CHRONIR_MAIL_POLL", .seconds(1)),
                                              logger: runtime.logs.logger("mail")) { try await sender.sendDue() })
        // Keys a rotation replaced are retired once the longest token lifetime has passed.
        parts.services.append(PeriodicService("signing key retirement", every: try env.duration("CHRONIR_SIGNING_KEY_SWEEP", .seconds(60)),
                                              logger: runtime.logs.logger("signing-keys")) { try await issuer.retireDue() })
        parts.services.append(outbox.relay)
        parts.services.append(billing.subscriber)
        try runtime.exporter(database: database, sections: AccountsExport.sections).register(ExportMethods.Accounts.self, in: &router)
        parts.services.append(try runtime.makeRPCServer(router: router, health: parts.health))
        return parts
    }

    /// Sign in with Apple and Google: `CHRONIR_APPLE_JWKS_URL` / `CHRONIR_GOOGLE_JWKS_URL` (the
    /// providers' own by default), `CHRONIR_APPLE_AUDIENCES` / `CHRONIR_GOOGLE_AUDIENCES` (the app's
    /// bundle or service ids / OAuth client ids, comma-separated; a provider without audiences is
    /// answered 404 CA017: not enabled), `CHRONIR_IDENTITY_TOKEN_SKEW` (60 s).
    static func identityTokens(env: ServiceEnvironment, http: HTTPClient, logger: Logger) throws -> IdentityTokens {
        let apple = ProviderKeys(url: env.string("CHRONIR_APPLE_JWKS_URL", "https://appleid.apple.com/auth/keys"), http: http, logger: logger)
        let google = ProviderKeys(url: env.string("CHRONIR_GOOGLE_JWKS_URL", "https://www.googleapis.com/oauth2/v3/certs"), http: http, logger: logger)
        return IdentityTokens(
            providers: [
                "apple": .init(name: "apple", issuers: ["https://appleid.apple.com"], audiences: env.list("CHRONIR_APPLE_AUDIENCES", []), keys: apple),
                "google": .init(name: "google", issuers: ["https://accounts.google.com", "accounts.google.com"],
                                audiences: env.list("CHRONIR_GOOGLE_AUDIENCES", []), keys: google),
            ],
            skew: Double(try env.duration("CHRONIR_IDENTITY_TOKEN_SKEW", .seconds(60)).components.seconds),
            logger: logger)
    }
}
