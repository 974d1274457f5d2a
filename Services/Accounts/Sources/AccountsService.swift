import Contracts
import Foundation
import Messaging
import NIOPosix
import Persistence
import ServiceKit

/// The accounts service: users, credentials, sessions and tokens, devices, settings.
public enum AccountsService {
    /// The schema migrations, applied at start.
    public static let migrations = AccountsMigrations.all

    /// Builds the running parts (used by `main` and by tests).
    public static func build(runtime: ServiceRuntime, database: Database?, parts: ServiceParts) async throws -> ServiceParts {
        guard let database else { throw ServiceEnvironment.Invalid("accounts needs a database") }
        var parts = parts
        let env = runtime.environment
        let pool = NIOThreadPool(numberOfThreads: try env.int("CHRONIR_HASH_THREADS", 2, in: 1...64))
        pool.start()
        let issuer = try await TokenIssuer.load(database: database, accessTTL: try env.duration("CHRONIR_ACCESS_TTL", .seconds(3600)))
        var router = RPCRouter()
        let outbox = try runtime.makePublishedOutbox(database: database, router: &router)
        let handlers = AccountsHandlers(
            store: AccountsStore(database: database),
            hasher: PasswordHasher(logN: try env.int("CHRONIR_SCRYPT_LOG_N", 15, in: 4...20), pool: pool),
            issuer: issuer, outbox: outbox.writer,
            refreshTTL: try env.duration("CHRONIR_REFRESH_TTL", .seconds(30 * 86_400))
        )
        handlers.register(into: &router)
        GroupHandlers(store: handlers.groups, accounts: handlers.store).register(into: &router)
        let billing = try runtime.makeSubscriber(to: .billing, handlers: handlers.billing, database: database, wakes: outbox.writer)
        parts.services.append(outbox.relay)
        parts.services.append(billing.subscriber)
        try runtime.exporter(database: database, sections: AccountsExport.sections).register(ExportMethods.Accounts.self, in: &router)
        parts.services.append(try runtime.makeRPCServer(router: router, health: parts.health))
        parts.closers.append(outbox.close)
        parts.closers.append { await billing.replay.close() }
        parts.closers.append { try? await pool.shutdownGracefully() }
        return parts
    }
}
