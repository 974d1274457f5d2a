import Foundation

/// Where each service listens, and where the others find it.
///
/// Defaults suit one machine (`make run`); containers override them with
/// `CHRONIR_<SERVICE>_RPC` / `CHRONIR_<SERVICE>_EVENTS` (e.g. `tcp://alarms:7102`). A service
/// binds `CHRONIR_RPC_BIND` / `CHRONIR_PUB_BIND` (defaults: its own ports on loopback; containers bind `tcp://*:…`).
public struct ServiceDirectory: Sendable {
    /// The services of the suite and their default ports.
    public enum Name: String, Sendable, CaseIterable {
        case accounts, alarms, scheduler, notifications, invitations, billing

        /// Default request/reply port.
        public var rpcPort: Int {
            switch self {
            case .accounts: 7101
            case .alarms: 7102
            case .scheduler: 7103
            case .notifications: 7104
            case .invitations: 7105
            case .billing: 7106
            }
        }

        /// Default event publishing port (the scheduler pushes instead of publishing).
        public var pubPort: Int { rpcPort + 100 }

        /// Default operations (metrics/health) HTTP port.
        public var opsPort: Int { rpcPort + 2000 }

        var envPrefix: String { "CHRONIR_\(rawValue.uppercased())" }
    }

    let environment: ServiceEnvironment

    public init(environment: ServiceEnvironment) {
        self.environment = environment
    }

    /// The RPC endpoints of `service` (comma-separated list allowed: several replicas).
    public func rpc(_ service: Name) -> [String] {
        environment.list("\(service.envPrefix)_RPC", ["tcp://127.0.0.1:\(service.rpcPort)"])
    }

    /// The event (PUB) endpoints of `service`.
    public func events(_ service: Name) -> [String] {
        environment.list("\(service.envPrefix)_EVENTS", ["tcp://127.0.0.1:\(service.pubPort)"])
    }

    /// The interface the default binds use: `CHRONIR_BIND_HOST` (default `127.0.0.1`;
    /// containers set `*`).
    public var bindHost: String { environment.string("CHRONIR_BIND_HOST", "127.0.0.1") }

    /// What this service binds for requests.
    public func rpcBind(for service: Name) -> [String] {
        environment.list("CHRONIR_RPC_BIND", ["tcp://\(bindHost):\(service.rpcPort)"])
    }

    /// What this service binds for publishing events.
    public func pubBind(for service: Name) -> [String] {
        environment.list("CHRONIR_PUB_BIND", ["tcp://\(bindHost):\(service.pubPort)"])
    }
}
