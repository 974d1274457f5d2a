import Foundation
import Logging
import Messaging
import Persistence
import ServiceLifecycle
import Synchronization
import UnixSignals

/// What a service's builder returns: the long-running parts, in start order (they stop in
/// reverse order). What the parts use is closed by whoever made it, after they have all
/// stopped: the runtime closes the clients, sinks and resources it made or was given
/// (``ServiceRuntime/owning(_:_:close:)``), so a builder keeps no list of things to close.
public struct ServiceParts: Sendable {
    /// Long-running parts, in start order.
    public var services: [any Service] = []
    /// Health checks beyond the database one.
    public let health: HealthChecks

    public init(health: HealthChecks) {
        self.health = health
    }
}

/// Lets the owner of a running service ask it to shut down gracefully (tests, embedders).
public final class ShutdownHandle: Sendable {
    private let group = Mutex<ServiceGroup?>(nil)
    private let requested = Mutex(false)

    public init() {}

    func attach(_ g: ServiceGroup) {
        let early = group.withLock { $0 = g; return requested.withLock { $0 } }
        if early { Task { await g.triggerGracefulShutdown() } }
    }

    /// Starts a graceful shutdown (like SIGTERM).
    public func shutdown() async {
        requested.withLock { $0 = true }
        if let g = group.withLock({ $0 }) { await g.triggerGracefulShutdown() }
    }
}

/// Runs a service the same way everywhere (`main`, tests, `chronirctl`): connect to its
/// database and apply its migrations (under an advisory lock) before anything serves, build
/// the parts, run them in one `ServiceGroup` until SIGTERM/SIGINT or ``ShutdownHandle``,
/// then stop them in reverse order within `CHRONIR_SHUTDOWN_GRACE` (default 10 s).
public enum ServiceHost {
    /// The builder of a service's parts, given its migrated database.
    public typealias Build = @Sendable (ServiceRuntime, Database, ServiceParts) async throws -> ServiceParts
    /// The builder of a service without a database (the gateway).
    public typealias DatabaselessBuild = @Sendable (ServiceRuntime, ServiceParts) async throws -> ServiceParts

    /// Runs a service with a database until shutdown: connects, applies `migrations` (the
    /// start step before anything serves), builds the parts and runs them.
    public static func run(
        runtime: ServiceRuntime, migrations: [Migration], handle: ShutdownHandle? = nil,
        handleSignals: Bool = true, build: @escaping Build
    ) async throws {
        try await host(runtime: runtime, migrations: migrations, handle: handle, handleSignals: handleSignals) { runtime, database, parts in
            guard let database else { throw ServiceEnvironment.Invalid("\(runtime.name) has no database") }
            return try await build(runtime, database, parts)
        }
    }

    /// Runs a service without a database until shutdown.
    public static func run(
        runtime: ServiceRuntime, handle: ShutdownHandle? = nil, handleSignals: Bool = true, build: @escaping DatabaselessBuild
    ) async throws {
        try await host(runtime: runtime, migrations: nil, handle: handle, handleSignals: handleSignals) { runtime, _, parts in
            try await build(runtime, parts)
        }
    }

    /// Runs until shutdown. `migrations` nil means the service has no database.
    private static func host(
        runtime: ServiceRuntime, migrations: [Migration]?, handle: ShutdownHandle?,
        handleSignals: Bool, build: @Sendable (ServiceRuntime, Database?, ServiceParts) async throws -> ServiceParts
    ) async throws {
        let logger = runtime.logger
        // Signals are trapped before anything else, so a SIGTERM during startup (migrations,
        // connecting) still ends in a graceful stop instead of the default instant death.
        let handle = handle ?? ShutdownHandle()
        let signals: UnixSignalsSequence? = handleSignals ? await UnixSignalsSequence(trapping: .sigterm, .sigint, .sighup) : nil
        let grace = runtime.config.shutdownGrace
        let health = HealthChecks()
        var database: Database? = nil
        if migrations != nil {
            let config = try databaseConfig(runtime)
            database = try Database(config: config, logger: runtime.logs.logger("postgres"), eventLoopGroup: runtime.eventLoopGroup)
        }
        logger.info("starting", metadata: ["instance": "\(runtime.instance)", "database": "\(database?.config.redacted ?? "none")"])
        for setting in KnownSettings.unknown(in: runtime.environment.values) { logger.warning("unknown setting \(setting); ignored") }
        // The pool runs in a task of its own, stopped after everything that uses it (the parts,
        // the probe) has ended, and waited for only so long (``stopPool``).
        var poolRun: Task<Void, Never>? = nil
        if let database {
            // The pool's run() is entered before the first lease (else PostgresNIO warns).
            let (entered, enter) = AsyncStream<Void>.makeStream()
            poolRun = Task {
                enter.finish()
                await database.client.run()
            }
            for await _ in entered {}
            await Task.yield()
        }
        do {
            try await runParts(runtime: runtime, database: database, migrations: migrations, handle: handle,
                               signals: signals, grace: grace, health: health, build: build)
        } catch {
            if let poolRun { await stopPool(poolRun, runtime: runtime) }
            throw error
        }
        if let poolRun { await stopPool(poolRun, runtime: runtime) }
    }

    /// Cancels the database pool's run() and waits for it at most 5 s. PostgresNIO 1.33 never
    /// answers a statement written on a connection that closed under it (``Database``'s
    /// `ensureOpen` narrows that to an instant), and a lease held by such a statement — a probe's
    /// `SELECT 1` or a part's query left behind by ``AbandoningService`` — can keep the pool's
    /// run() from ever returning after cancellation, and the whole shutdown with it. The
    /// process is about to exit, so the pool is left behind then, logged as an error.
    static func stopPool(_ run: Task<Void, Never>, runtime: ServiceRuntime, patience: Duration = .seconds(5)) async {
        runtime.enter("closing its database pool")
        run.cancel()
        let (outcomes, outcome) = AsyncStream<Bool>.makeStream()
        let waiter = Task {
            await run.value
            outcome.yield(true)
            outcome.finish()
        }
        let timer = Task {
            try? await Task.sleep(for: patience)
            outcome.yield(false)
            outcome.finish()
        }
        var first = outcomes.makeAsyncIterator()
        let ended = await first.next() ?? false
        timer.cancel()
        if !ended {
            waiter.cancel()
            runtime.logger.error("the database pool did not close within \(patience) of its cancellation; left behind")
        }
    }

    /// SIGHUP takes the bus keys the key files list now (a key rotation); any other signal
    /// shuts the service down.
    private static func handleSignals(_ signals: UnixSignalsSequence, runtime: ServiceRuntime, handle: ShutdownHandle) async {
        let logger = runtime.logger
        for await signal in signals {
            if signal == .sighup {
                do {
                    try BusKeys.reload(principal: runtime.name, environment: runtime.environment, context: runtime.zmq, logger: logger)
                } catch {
                    logger.error("reloading the bus keys failed; the keys in use stay", metadata: ["error": "\(error)"])
                }
                continue
            }
            logger.notice("received \(signal), shutting down")
            runtime.enter("stopping its parts")
            await handle.shutdown()
        }
    }

    /// Runs the parts until shutdown: migrations, the availability probe, the build, the group.
    private static func runParts(
        runtime: ServiceRuntime, database: Database?, migrations: [Migration]?, handle: ShutdownHandle,
        signals: UnixSignalsSequence?, grace: Duration, health: HealthChecks,
        build: @Sendable (ServiceRuntime, Database?, ServiceParts) async throws -> ServiceParts
    ) async throws {
        let logger = runtime.logger
        try await withThrowingTaskGroup(of: Void.self) { pool in
            defer { pool.cancelAll() }
            if let signals {
                pool.addTask { await handleSignals(signals, runtime: runtime, handle: handle) }
            }
            if let database, let migrations {
                runtime.enter("connecting to PostgreSQL")
                try await database.waitUntilReachable()
                runtime.enter("migrating")
                try await Migrator(database: database).migrate(migrations)
                health.addDatabase(database)
                let probeEvery = runtime.config.database.probeInterval
                let probeTimeout = runtime.config.database.probeTimeout
                // chronir_database_available: 1 while the probe answers (the alert on the database).
                let available = runtime.telemetry.gauge("chronir_database_available")
                pool.addTask {
                    await database.probeAvailability(interval: probeEvery, timeout: probeTimeout) { available.record($0 ? 1 : 0) }
                }
            }
            health.add("consumers") { runtime.consumers.check() }
            let parts: ServiceParts
            runtime.enter("building its parts")
            do {
                parts = try await build(runtime, database, ServiceParts(health: health))
            } catch {
                await runtime.closeOwned()
                throw error
            }
            // The operations endpoint runs before the parts and stops after them, answering
            // `/readyz` 503 while they drain; the readiness marker, last, is told first.
            var services: [any Service] = []
            if let otlp = runtime.otlpExporter { services.append(otlp) }
            if let spanFile = runtime.spanFile { services.append(spanFile) }
            if let ops = try OpsServer.make(runtime: runtime, health: health, defaultPort: opsPort(runtime)) {
                services.append(ops)
            }
            services.append(contentsOf: parts.services)
            services.append(ReadinessMarker(health: health))
            let group = ServiceGroup(configuration: .init(
                // The group allows 5 s of cancellation: a part still running after 4 s is left.
                services: services.map {
                    .init(service: AbandoningService(part: $0, name: "\(type(of: $0))", patience: .seconds(4),
                                                     logger: runtime.logs.logger("lifecycle")))
                },
                gracefulShutdownSignals: [],
                cancellationSignals: [],
                logger: runtime.logs.logger("lifecycle")
            ).with(grace: grace))
            handle.attach(group)
            runtime.enter("running")
            do {
                try await group.run()
            } catch {
                logger.error("stopped with an error", metadata: ["error": "\(String(reflecting: error))"])
                await runtime.closeOwned()
                runtime.enter("waiting for its probes to end")
                throw error
            }
            await runtime.closeOwned()
            // Leaving this scope cancels the availability probe and waits for it.
            runtime.enter("waiting for its probes to end")
            logger.info("stopped")
        }
    }

    /// The whole life of a service process: read the configuration, run, shut down, and exit
    /// with status 1 and a one-line reason on a fatal error (bad configuration, migrations
    /// that fail, a part that crashes) instead of a crash report.
    public static func main(service: String, migrations: [Migration], build: @escaping Build) async -> Never {
        await main(service: service) { runtime in
            try await run(runtime: runtime, migrations: migrations, build: build)
        }
    }

    /// ``main(service:migrations:build:)`` for a service without a database.
    public static func main(service: String, build: @escaping DatabaselessBuild) async -> Never {
        await main(service: service) { runtime in
            try await run(runtime: runtime, build: build)
        }
    }

    /// ``main(service:migrations:build:)`` with the service's typed settings: `config` is read
    /// from the environment before anything connects (a bad value exits with status 2 and the
    /// variable's name), then handed to `build`.
    public static func main<Config: ServiceConfig>(
        service: String, migrations: [Migration], config: Config.Type,
        build: @escaping @Sendable (ServiceRuntime, Database, ServiceParts, Config) async throws -> ServiceParts
    ) async -> Never {
        await main(service: service) { runtime in
            let settings = try configuration(Config.self, runtime: runtime)
            _ = try configuration(runtime: runtime) { try databaseConfig(runtime) }
            try await run(runtime: runtime, migrations: migrations) { try await build($0, $1, $2, settings) }
        }
    }

    /// ``main(service:build:)`` with the service's typed settings, read before anything connects.
    public static func main<Config: ServiceConfig>(
        service: String, config: Config.Type,
        build: @escaping @Sendable (ServiceRuntime, ServiceParts, Config) async throws -> ServiceParts
    ) async -> Never {
        await main(service: service) { runtime in
            let settings = try configuration(Config.self, runtime: runtime)
            try await run(runtime: runtime) { try await build($0, $1, settings) }
        }
    }

    /// Reads `Config`; on a bad value says so on standard error and exits with status 2 (as a
    /// bad setting of the runtime does), nothing connected yet.
    private static func configuration<Config: ServiceConfig>(_ type: Config.Type, runtime: ServiceRuntime) throws -> Config {
        try configuration(runtime: runtime) { try Config(environment: runtime.environment) }
    }

    /// Reads a setting with `read`; on a bad value says so on standard error and exits with status 2.
    private static func configuration<Value>(runtime: ServiceRuntime, _ read: () throws -> Value) throws -> Value {
        do {
            return try read()
        } catch {
            FileHandle.standardError.write(Data("\(runtime.name): configuration error: \(error)\n".utf8))
            runtime.logger.critical("configuration error: \(error)")
            exit(2)
        }
    }

    private static func main(service: String, running: (ServiceRuntime) async throws -> Void) async -> Never {
        let runtime: ServiceRuntime
        do {
            runtime = try ServiceRuntime(service: service)
        } catch {
            FileHandle.standardError.write(Data("\(service): configuration error: \(error)\n".utf8))
            exit(2)
        }
        do {
            try await running(runtime)
        } catch {
            runtime.logger.critical("fatal: \(error)")
            await runtime.shutdown()
            exit(1)
        }
        await runtime.shutdown()
        exit(0)
    }

    /// The database's address (`DATABASE_URL` or `DATABASE_URL_FILE`, `PG*`, `CHRONIR_DB_SCHEMA`,
    /// `CHRONIR_DB_POOL_SIZE`) with the timings of ``RuntimeConfig/database``.
    static func databaseConfig(_ runtime: ServiceRuntime) throws -> DatabaseConfig {
        var config = try DatabaseConfig.fromEnvironment(runtime.environment.values, defaultSchema: runtime.name)
        config.connectTimeout = runtime.config.database.connectTimeout
        config.statementTimeout = runtime.config.database.statementTimeout
        return config
    }

    static func opsPort(_ runtime: ServiceRuntime) -> Int {
        ServiceDirectory.Name(rawValue: runtime.name).map { runtime.directory.opsPort(for: $0) } ?? 9100
    }
}

extension ServiceGroupConfiguration {
    func with(grace: Duration) -> ServiceGroupConfiguration {
        var c = self
        c.maximumGracefulShutdownDuration = grace
        c.maximumCancellationDuration = .seconds(5)
        return c
    }
}
