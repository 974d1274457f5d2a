import AsyncHTTPClient
import Contracts
import Foundation
import Logging
import Messaging
import Outbox
import Persistence
import ServiceKit

/// The alarms service: alarms and schedules, completions, sharing rules, tier limits, sync.
public enum AlarmsService {
    /// The schema migrations, applied at start.
    public static let migrations = AlarmsMigrations.all

    /// Builds the running parts (used by `main` and by tests).
    public static func build(runtime: ServiceRuntime, database: Database, parts: ServiceParts) async throws -> ServiceParts {
        var parts = parts
        let env = runtime.environment
        var router = RPCRouter()
        let outbox = try runtime.makePublishedOutbox(database: database, router: &router)
        let store = AlarmStore(database: database)
        let changes = AlarmChanges(store: store, outbox: outbox.writer)
        let missedWindow = try env.duration("CHRONIR_MISSED_WINDOW", .seconds(7200))
        let groups = GroupAccess(store: store, accounts: try runtime.rpcClient(to: .accounts))
        AlarmHandlers(store: store, changes: changes, outbox: outbox.writer, groups: groups,
                      creationsPerMinute: try env.int("CHRONIR_ALARM_CREATIONS_PER_MINUTE", 5, in: 1...100_000))
            .register(into: &router)
        AlarmQueryHandlers(store: store).register(into: &router)
        CompletionHandlers(store: store, changes: changes, outbox: outbox.writer, missedWindow: missedWindow).register(into: &router)
        CalendarFeedHandlers(store: store).register(into: &router)
        ExportHandlers(store: store, completions: CompletionQueries(store: store, missedWindow: missedWindow)).register(into: &router)
        let tiers = TierHandlers(store: store, changes: changes, outbox: outbox.writer)
        tiers.register(into: &router)
        let http = runtime.owning(HTTPClient(eventLoopGroup: runtime.eventLoopGroup), "http client") { try? await $0.shutdown() }
        let storage = try await photoStorage(env: env, database: database, http: http, logger: runtime.logs.logger("photos"))
        let photos = PhotoStore(database: database)
        PhotoHandlers(store: store, photos: photos, storage: storage, changes: changes, outbox: outbox.writer,
                      uploadGrace: try env.duration("CHRONIR_PHOTO_UPLOAD_GRACE", .seconds(3600)))
            .register(into: &router)
        parts.services.append(PeriodicService("photo sweep", every: try env.duration("CHRONIR_PHOTO_SWEEP", .seconds(5)),
                                              logger: runtime.logs.logger("photos")) { _ = try await photos.sweep(storage: storage) })
        let billingClient = try runtime.rpcClient(to: .billing)
        SnoozeHandlers(store: store, outbox: outbox.writer, billing: billingClient).register(into: &router)

        // Product analytics ride on the same consumers (CHRONIR_ANALYTICS=off leaves them out).
        let analyticsOn = try env.bool("CHRONIR_ANALYTICS", true)
        let analytics = AnalyticsHandlers(store: try await AnalyticsStore.load(database: database, configured: try env.secret("CHRONIR_ANALYTICS_KEY")),
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
        try runtime.exporter(database: database, sections: AlarmsExport.sections).register(ExportMethods.Alarms.self, in: &router)
        // Photo uploads and reads are messages of up to 8 MiB.
        parts.services.append(try runtime.makeRPCServer(router: router, health: parts.health,
                                                        maxFrameBytes: max(runtime.maxFrameBytes, PhotoMethods.maxMessageBytes)))
        return parts
    }

    /// The photo storage: an S3-compatible bucket when `CHRONIR_S3_ENDPOINT` is set (with
    /// `CHRONIR_S3_BUCKET`, `CHRONIR_S3_REGION`, `CHRONIR_S3_ACCESS_KEY_ID` and
    /// `CHRONIR_S3_SECRET_ACCESS_KEY`; the bucket is created when missing), else the service's
    /// own PostgreSQL.
    static func photoStorage(env: ServiceEnvironment, database: Database, http: HTTPClient, logger: Logger) async throws -> any PhotoStorage {
        guard let endpoint = env.optional("CHRONIR_S3_ENDPOINT") else { return DatabasePhotoStorage(database: database) }
        guard let key = try env.secret("CHRONIR_S3_ACCESS_KEY_ID"), let secret = try env.secret("CHRONIR_S3_SECRET_ACCESS_KEY") else {
            throw ServiceEnvironment.Invalid("CHRONIR_S3_ENDPOINT needs CHRONIR_S3_ACCESS_KEY_ID and CHRONIR_S3_SECRET_ACCESS_KEY (or their _FILE forms)")
        }
        let s3 = S3PhotoStorage(config: .init(endpoint: endpoint, bucket: env.string("CHRONIR_S3_BUCKET", "chronir-photos"),
                                              region: env.string("CHRONIR_S3_REGION", "us-east-1"), accessKeyID: key, secretAccessKey: secret),
                                http: http, logger: logger)
        try await s3.ensureBucket()
        logger.info("photos are stored in \(s3.name)")
        return s3
    }
}
