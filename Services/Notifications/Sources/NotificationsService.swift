import Contracts
import Foundation
import Messaging
import NIOCore
import Outbox
import Persistence
import ServiceKit

/// The notifications service: turns scheduler (and later invitation) events into inbox entries
/// and pushes (APNs, FCM, webhook), retries them, and publishes each new inbox entry for the
/// gateway's live streams.
public enum NotificationsService: ChronirService {
    /// The service's name (``ChronirService/name``).
    public static let name = "notifications"
    /// The schema migrations, applied at start.
    public static let migrations = NotificationsMigrations.all

    /// Builds the running parts with `config` (used by `main`, which reads it before anything connects).
    public static func build(runtime: ServiceRuntime, database: Database, parts: ServiceParts, config: NotificationsConfig) async throws -> ServiceParts {
        var parts = parts
        let http = runtime.owning(try config.makeHTTPClient(eventLoopGroup: runtime.eventLoopGroup), "http client") { try? await $0.shutdown() }
        // Webhooks go to URLs users choose: clients of their own, checked destinations, no redirects.
        let webhooks = try config.makeWebhookClients(eventLoopGroup: runtime.eventLoopGroup).map { clients in
            runtime.owning(clients, "webhook http clients") { await $0.shutdown() }
        }
        let providers: [String: any PushProvider]
        do {
            providers = try await config.makeProviders(client: http, webhooks: webhooks)
        } catch {
            try? await http.shutdown()
            throw ServiceEnvironment.Invalid("push provider settings: \(error)")
        }
        let logger = runtime.logs.logger("deliveries")
        logger.info("push providers: \(providers.keys.sorted().joined(separator: ", "))")
        if config.webhookAllowPrivate, webhooks != nil {
            logger.warning("CHRONIR_WEBHOOK_ALLOW_PRIVATE is set: webhooks may reach loopback, private and other internal addresses")
        }
        var router = RPCRouter()
        let outbox = try runtime.makePublishedOutbox(database: database, router: &router)
        let store = NotificationStore(database: database)
        let worker = DeliveryWorker(store: store, providers: providers, policy: config.retry, telemetry: runtime.telemetry,
                                    logger: logger, poll: config.poll, limits: config.sendLimits, deferFor: config.webhookDefer,
                                    sendBound: max(config.webhookDeadline + .seconds(5), .seconds(15)) + .seconds(2))
        let handlers = NotificationEventHandlers(outbox: outbox.writer, worker: worker, store: store, hostClock: config.hostClock)
        InboxHandlers(store: store).register(into: &router)
        let scheduler = try runtime.makePushedSubscriber(to: .scheduler, handlers: handlers.scheduler, database: database, router: &router, wakes: outbox.writer)
        let accounts = try runtime.makeSubscriber(to: .accounts, handlers: handlers.accounts, database: database, wakes: outbox.writer)
        let invitations = try runtime.makeSubscriber(to: .invitations, handlers: handlers.invitations, database: database, wakes: outbox.writer)
        let alarms = try runtime.makeSubscriber(to: .alarms, handlers: handlers.alarms, database: database, wakes: outbox.writer)
        parts.services.append(outbox.relay)
        parts.services.append(accounts.subscriber)
        parts.services.append(invitations.subscriber)
        parts.services.append(alarms.subscriber)
        parts.services.append(scheduler.subscriber)
        parts.services.append(worker)
        // Inbox ids above every id handed out before, even after the database went back: raised
        // before the consumers start, then every second.
        let floorLogger = runtime.logs.logger("inbox")
        do { try await store.raiseIdFloor() } catch { floorLogger.warning("inbox id floor not raised at start: \(error)") }
        parts.services.append(PeriodicService("inbox id floor", every: .seconds(1), logger: floorLogger) {
            do { try await store.raiseIdFloor() } catch { floorLogger.debug("inbox id floor not raised: \(error)") }
        })
        let retention = RetentionSweeper(store: store, retention: config.retention, logger: runtime.logs.logger("retention"))
        parts.services.append(PeriodicService("retention sweep", every: config.retentionSweep, logger: runtime.logs.logger("retention")) {
            try await retention.sweep()
        })
        runtime.exporter(database: database, sections: NotificationsExport.sections).register(ExportMethods.Notifications.self, in: &router)
        parts.services.append(try runtime.makeRPCServer(router: router, health: parts.health))
        return parts
    }
}
