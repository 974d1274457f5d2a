import AsyncHTTPClient
import Contracts
import Foundation
import Logging
import Messaging
import Outbox
import Persistence
import ServiceKit

/// The alarms service: alarms and schedules, completions, sharing rules, tier limits, sync.
public enum AlarmsService: ChronirService {
    /// The service's name (``ChronirService/name``).
    public static let name = "alarms"
    /// The schema migrations, applied at start.
    public static let migrations = AlarmsMigrations.all

    /// Builds the running parts with the service's settings (used by `main`, which reads
    /// `config` before anything connects).
    public static func build(runtime: ServiceRuntime, database: Database, parts: ServiceParts, config: AlarmsConfig) async throws -> ServiceParts {
        var parts = parts
        var router = RPCRouter()
        let outbox = try runtime.makePublishedOutbox(database: database, router: &router)
        let store = AlarmStore(database: database)
        let changes = AlarmChanges(store: store, outbox: outbox.writer)
        let missedWindow = config.missedWindow
        let groups = GroupAccess(store: store, accounts: try runtime.rpcClient(to: .accounts))
        AlarmHandlers(store: store, changes: changes, outbox: outbox.writer, groups: groups,
                      creationsPerMinute: config.creationsPerMinute, alarmsPerAccount: config.alarmsPerAccount)
            .register(into: &router)
        AlarmQueryHandlers(store: store).register(into: &router)
        CompletionHandlers(store: store, changes: changes, outbox: outbox.writer, missedWindow: missedWindow).register(into: &router)
        CalendarFeedHandlers(store: store).register(into: &router)
        ExportHandlers(store: store, completions: CompletionQueries(store: store, missedWindow: missedWindow)).register(into: &router)
        let tiers = TierHandlers(store: store, changes: changes, outbox: outbox.writer)
        tiers.register(into: &router)
        let http = runtime.owning(HTTPClient(eventLoopGroup: runtime.eventLoopGroup), "http client") { try? await $0.shutdown() }
        let storage = try await photoStorage(s3: config.s3, database: database, http: http, logger: runtime.logs.logger("photos"))
        let photos = PhotoStore(database: database)
        PhotoHandlers(store: store, photos: photos, storage: storage, changes: changes, outbox: outbox.writer,
                      uploadGrace: config.photoUploadGrace, uploadsPerMinute: config.photoUploadsPerMinute,
                      uploads: BoundedSlots(limit: config.photoUploads, refusal: "too many photo uploads in progress; try again in a moment",
                                            retryAfterSeconds: 2))
            .register(into: &router)
        parts.services.append(PeriodicService("photo sweep", every: config.photoSweep,
                                              logger: runtime.logs.logger("photos")) { _ = try await photos.sweep(storage: storage) })
        let billingClient = try runtime.rpcClient(to: .billing)
        SnoozeHandlers(store: store, outbox: outbox.writer, billing: billingClient).register(into: &router)
        SoundHandlers(store: store).register(into: &router)

        // Product analytics ride on the same consumers (CHRONIR_ANALYTICS=off leaves them out).
        let analyticsOn = config.analytics
        let analytics = AnalyticsHandlers(store: try await AnalyticsStore.load(database: database, configured: config.analyticsKey),
                                          reports: AnalyticsReports(database: database))
        analytics.register(into: &router)
        func with(_ own: EventHandlers, _ extra: EventHandlers) -> EventHandlers { analyticsOn ? own.merging(extra) : own }
        let accounts = try runtime.makeSubscriber(to: .accounts, handlers: with(AccountsEventHandlers(store: store, changes: changes).handlers, analytics.accountsStream),
                                                  database: database, wakes: outbox.writer)
        let scheduler = try runtime.makePushedSubscriber(
            to: .scheduler, handlers: with(SchedulerEventHandlers(store: store, changes: changes).handlers, analytics.schedulerStream),
            database: database, router: &router, wakes: outbox.writer)
        let invitations = try runtime.makeSubscriber(to: .invitations, handlers: with(InvitationEventHandlers(store: store, changes: changes).handlers, analytics.invitationsStream),
                                                     database: database, wakes: outbox.writer)
        let billing = try runtime.makeSubscriber(to: .billing, handlers: with(tiers.billing, analytics.billingStream), database: database, wakes: outbox.writer)
        // The service's own stream, read back for analytics only.
        if analyticsOn {
            let own = try runtime.makeSubscriber(to: .alarms, handlers: analytics.alarmsStream, database: database)
            parts.services.append(own.subscriber)
        }
        parts.services.append(outbox.relay)
        parts.services.append(billing.subscriber)
        parts.services.append(accounts.subscriber)
        parts.services.append(invitations.subscriber)
        parts.services.append(scheduler.subscriber)
        runtime.exporter(database: database, sections: AlarmsExport.sections).register(ExportMethods.Alarms.self, in: &router)
        // Photo uploads and reads are messages of up to 8 MiB.
        parts.services.append(try runtime.makeRPCServer(router: router, health: parts.health,
                                                        maxFrameBytes: max(runtime.maxFrameBytes, PhotoMethods.maxMessageBytes)))
        return parts
    }

    /// The photo storage: the S3-compatible bucket of `s3` when there is one (``AlarmsConfig/s3``,
    /// from `CHRONIR_S3_ENDPOINT`; the bucket is created when missing), else the service's own
    /// PostgreSQL.
    static func photoStorage(s3 config: S3PhotoStorage.Config?, database: Database, http: HTTPClient, logger: Logger) async throws -> any PhotoStorage {
        guard let config else { return DatabasePhotoStorage(database: database) }
        let s3 = S3PhotoStorage(config: config, http: http, logger: logger)
        try await s3.ensureBucket()
        logger.info("photos are stored in \(s3.name)")
        return s3
    }
}
