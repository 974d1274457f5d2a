import Contracts
import Foundation
import Messaging
import Outbox
import Persistence
import ServiceKit

/// The invitations service: invitations to share an alarm or join a group, their answers and
/// expiry, published for alarms, accounts and notifications.
public enum InvitationsService: ChronirService {
    /// The service's name (``ChronirService/name``).
    public static let name = "invitations"
    /// The schema migrations, applied at start.
    public static let migrations = InvitationsMigrations.all

    /// Builds the running parts with `config` (used by `main`, which reads it before anything connects).
    public static func build(runtime: ServiceRuntime, database: Database, parts: ServiceParts, config: InvitationsConfig) async throws -> ServiceParts {
        var parts = parts
        var router = RPCRouter()
        let outbox = try runtime.makePublishedOutbox(database: database, router: &router)
        let store = InvitationStore(database: database, outbox: outbox.writer)
        let accounts = try runtime.rpcClient(to: .accounts)
        let alarms = try runtime.rpcClient(to: .alarms)
        InvitationHandlers(store: store, accounts: accounts, alarms: alarms, lifetime: config.lifetime, perHour: config.perHour,
                           mails: InvitationMails(publicURL: config.publicURL)).register(into: &router)
        let smtp = try config.mail.client(eventLoopGroup: runtime.eventLoopGroup)
        if smtp == nil { runtime.logger.warning("CHRONIR_SMTP_URL is not set: invitations to addresses without an account wait in mail_outbox") }
        let sender = MailSender(database: database, smtp: smtp, logger: runtime.logs.logger("mail"))
        parts.services.append(PeriodicService("mail sender", every: config.mail.poll, logger: runtime.logs.logger("mail")) {
            try await sender.sendDue()
        })
        let events = InvitationEventHandlers(store: store)
        let accountsStream = try runtime.makeSubscriber(to: .accounts, handlers: events.accounts, database: database, wakes: outbox.writer)
        let alarmsStream = try runtime.makeSubscriber(to: .alarms, handlers: events.alarms, database: database, wakes: outbox.writer)
        parts.services.append(outbox.relay)
        parts.services.append(accountsStream.subscriber)
        parts.services.append(alarmsStream.subscriber)
        let expiry = ExpirySweeper(store: store, logger: runtime.logs.logger("expiry"))
        parts.services.append(PeriodicService("invitation expiry", every: config.sweep,
                                              logger: runtime.logs.logger("expiry")) { _ = try await expiry.sweep() })
        runtime.exporter(database: database, sections: InvitationsExport.sections).register(ExportMethods.Invitations.self, in: &router)
        parts.services.append(try runtime.makeRPCServer(router: router, health: parts.health))
        return parts
    }
}
