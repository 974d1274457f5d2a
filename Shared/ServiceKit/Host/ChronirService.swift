import Persistence

/// A service with a schema of its own, as the host runs it: its name, its migrations, its typed
/// settings and the one function that builds its running parts. Each `main` is
/// `await ServiceHost.main(AlarmsService.self)`; the tests build it with the settings read from
/// the suite's environment (``build(runtime:database:parts:)``).
public protocol ChronirService {
    /// The service's settings, read and checked before anything connects.
    associatedtype Config: ServiceConfig

    /// The service's name: its schema, its role, its bus principal (`alarms`).
    static var name: String { get }
    /// The schema migrations, applied at start.
    static var migrations: [Migration] { get }
    /// Builds the running parts with settings already read and checked.
    static func build(runtime: ServiceRuntime, database: Database, parts: ServiceParts, config: Config) async throws -> ServiceParts
}

extension ChronirService {
    /// Builds the running parts with the settings read from `runtime`'s environment (the tests,
    /// which start services in their own process).
    public static func build(runtime: ServiceRuntime, database: Database, parts: ServiceParts) async throws -> ServiceParts {
        try await build(runtime: runtime, database: database, parts: parts, config: Config(environment: runtime.environment))
    }
}

extension ServiceHost {
    /// The whole life of `service`'s process (``main(service:migrations:config:build:)``).
    public static func main<S: ChronirService>(_ service: S.Type) async -> Never {
        await main(service: S.name, migrations: S.migrations, config: S.Config.self) {
            try await S.build(runtime: $0, database: $1, parts: $2, config: $3)
        }
    }
}
