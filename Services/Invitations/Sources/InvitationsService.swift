import Contracts
import Foundation
import Messaging
import Outbox
import Persistence
import ServiceKit

/// The invitations service: invitations to share an alarm or join a group, their answers and
/// expiry, published for alarms, accounts and notifications.
public enum InvitationsService {
    /// The schema migrations, applied at start.
    public static let migrations = InvitationsMigrations.all

    /// Builds the running parts (used by `main` and by tests).
    public static func build(runtime: ServiceRuntime, database: Database, parts: ServiceParts) async throws -> ServiceParts {
        var parts = parts
        let env = runtime.environment
        var router = RPCRouter()
        let outbox = try runtime.makePublishedOutbox(database: database, router: &router)
        let store = InvitationStore(database: database, outbox: outbox.writer)
        let accounts = try runtime.rpcClient(to: .accounts)
        let alarms = try runtime.rpcClient(to: .alarms)
        InvitationHandlers(store: store, accounts: accounts, alarms: alarms,
                           lifetime: try env.duration("CHRONIR_INVITATION_LIFETIME", .seconds(7 * 86_400)),
                           perHour: try env.int("CHRONIR_INVITATIONS_PER_HOUR", 10, in: 1...100_000)).register(into: &router)
        let events = InvitationEventHandlers(store: store)
        let accountsStream = try runtime.makeSubscriber(to: .accounts, handlers: events.accounts, database: database, wakes: outbox.writer)
        let alarmsStream = try runtime.makeSubscriber(to: .alarms, handlers: events.alarms, database: database, wakes: outbox.writer)
        parts.services.append(outbox.relay)
        parts.services.append(accountsStream.subscriber)
        parts.services.append(alarmsStream.subscriber)
        let expiry = ExpirySweeper(store: store, logger: runtime.logs.logger("expiry"))
        parts.services.append(PeriodicService("invitation expiry", every: try env.duration("CHRONIR_INVITATION_SWEEP", .seconds(60)),
                                              logger: runtime.logs.logger("expiry")) { _ = try await expiry.sweep() })
        try runtime.exporter(database: database, sections: InvitationsExport.sections).register(ExportMethods.Invitations.self, in: &router)
        parts.services.append(try runtime.makeRPCServer(router: router, health: parts.health))
        return parts
    }
}
