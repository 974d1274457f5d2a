import Foundation

/// Where each service listens, and where the others find it: the one place the port scheme is
/// written (`scripts/run.sh` and `deploy/compose.yaml` name no port of the bus).
///
/// Defaults suit one machine (`make run`). `CHRONIR_PEER_HOST` names the host of every peer,
/// `{service}` standing for its name (containers: `{service}`, so alarms is `tcp://alarms:7102`);
/// `CHRONIR_<SERVICE>_RPC` / `CHRONIR_<SERVICE>_EVENTS` override one service's endpoints. A
/// service binds `CHRONIR_RPC_BIND` / `CHRONIR_PUB_BIND` (defaults: its own ports on
/// `CHRONIR_BIND_HOST`). Replicas on one machine (`CHRONIR_<SERVICE>_REPLICAS=n`, or
/// `CHRONIR_REPLICAS=n` for every service; each started with `CHRONIR_REPLICA=k`) take the ports
/// of replica 1 plus 10 × (k − 1), and their peers list every replica's endpoints. Elsewhere one
/// name stands for all replicas (compose `--scale`, a headless Kubernetes Service): the sockets
/// resolve it to every address (`EndpointDiscovery`, `CHRONIR_PEER_DISCOVERY_INTERVAL`).
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

        /// The ports of replica `k` (1-based) on one machine are those of replica 1 plus this
        /// times k − 1.
        public static let replicaPortStep = 10

        var envPrefix: String { "CHRONIR_\(rawValue.uppercased())" }
    }

    let environment: ServiceEnvironment

    public init(environment: ServiceEnvironment) {
        self.environment = environment
    }

    /// The host of `service` as its peers reach it (`CHRONIR_PEER_HOST`, default `127.0.0.1`).
    public func peerHost(_ service: Name) -> String {
        environment.string("CHRONIR_PEER_HOST", "127.0.0.1").replacingOccurrences(of: "{service}", with: service.rawValue)
    }

    /// The most replicas of a service on one machine: replica 11's ports would be those of
    /// replica 1's event sockets (``Name/replicaPortStep`` 10, event ports 100 above).
    public static let maxReplicas = 10

    /// Checks the replica settings (`CHRONIR_REPLICAS`, `CHRONIR_REPLICA`, each
    /// `CHRONIR_<SERVICE>_REPLICAS`): an integer in 1…``maxReplicas`` each. The service's start
    /// calls it, so a bad value stops the process with status 2 and the variable's name instead
    /// of becoming 1 without a word (``replicas(of:)`` and ``replica`` read them later).
    public static func validate(_ environment: ServiceEnvironment) throws {
        let range = 1...maxReplicas
        _ = try environment.int("CHRONIR_REPLICAS", 1, in: range)
        _ = try environment.int("CHRONIR_REPLICA", 1, in: range)
        for service in Name.allCases { _ = try environment.int("\(service.envPrefix)_REPLICAS", 1, in: range) }
    }

    /// How many replicas of `service` run on one machine (`CHRONIR_<SERVICE>_REPLICAS`, else
    /// `CHRONIR_REPLICAS`, default 1; ``validate(_:)`` checked them at start).
    public func replicas(of service: Name) -> Int {
        let all = environment.string("CHRONIR_REPLICAS", "1")
        return max(1, Int(environment.string("\(service.envPrefix)_REPLICAS", all)) ?? 1)
    }

    /// This process's replica number (`CHRONIR_REPLICA`, 1-based, default 1).
    public var replica: Int { max(1, Int(environment.string("CHRONIR_REPLICA", "1")) ?? 1) }

    /// The offset of replica `k`'s ports.
    static func offset(replica k: Int) -> Int { Name.replicaPortStep * (k - 1) }

    /// The RPC endpoints of `service` (comma-separated list allowed: several replicas).
    public func rpc(_ service: Name) -> [String] {
        let host = peerHost(service)
        return environment.list("\(service.envPrefix)_RPC",
                                (1...replicas(of: service)).map { "tcp://\(host):\(service.rpcPort + Self.offset(replica: $0))" })
    }

    /// The event (PUB) endpoints of `service`: every replica's, since each relays what it numbered.
    public func events(_ service: Name) -> [String] {
        let host = peerHost(service)
        return environment.list("\(service.envPrefix)_EVENTS",
                                (1...replicas(of: service)).map { "tcp://\(host):\(service.pubPort + Self.offset(replica: $0))" })
    }

    /// The default operations port of `service` as this replica.
    public func opsPort(for service: Name) -> Int {
        service.opsPort + Self.offset(replica: replica)
    }

    /// The interface the default binds use: `CHRONIR_BIND_HOST` (default `127.0.0.1`;
    /// containers set `*`).
    public var bindHost: String { environment.string("CHRONIR_BIND_HOST", "127.0.0.1") }

    /// What this service binds for requests.
    public func rpcBind(for service: Name) -> [String] {
        environment.list("CHRONIR_RPC_BIND", ["tcp://\(bindHost):\(service.rpcPort + Self.offset(replica: replica))"])
    }

    /// What this service binds for publishing events.
    public func pubBind(for service: Name) -> [String] {
        environment.list("CHRONIR_PUB_BIND", ["tcp://\(bindHost):\(service.pubPort + Self.offset(replica: replica))"])
    }
}
