import Foundation
import Logging
import Messaging
import ZMQ

/// Reads the CurveZMQ keys of this process from the environment and builds its ZeroMQ context.
///
/// - `CHRONIR_BUS_KEYS`: a directory as `chronirctl keys generate` writes it
///   (`public/<principal>.pub`, `secret/<principal>.key`);
/// - `CHRONIR_BUS_PUBLIC_KEYS` (a directory of `*.pub`) and `CHRONIR_BUS_SECRET_KEY_FILE`
///   override its two parts (compose mounts the public keys and passes each service its
///   own secret);
/// - with none of them, the process refuses to start unless `CHRONIR_INSECURE_BUS=1`, and
///   then says in its log that anyone who reaches its ports is trusted.
public enum BusKeys {
    /// The context of `principal`: CURVE-secured when keys are configured.
    /// `CHRONIR_PEER_DISCOVERY_INTERVAL` (default 5 s, 0 off): how often peer names are resolved
    /// again to find every replica behind them (``EndpointDiscovery``).
    /// `CHRONIR_BUS_HEARTBEAT` (default 5 s, 0 off) and `CHRONIR_BUS_HEARTBEAT_TIMEOUT` (default
    /// 3 × the heartbeat): the ZMTP heartbeats of every socket (``ZMQHeartbeat``).
    public static func context(principal: String, environment: ServiceEnvironment, logger: Logger, ioThreads: Int) throws -> ZMQContext {
        let every = try environment.duration("CHRONIR_PEER_DISCOVERY_INTERVAL", .seconds(5))
        let discovery: Duration? = every > .zero ? every : nil
        let beat = try environment.duration("CHRONIR_BUS_HEARTBEAT", .seconds(5))
        let beatTimeout = try environment.duration("CHRONIR_BUS_HEARTBEAT_TIMEOUT", beat * 3)
        if beat > .zero, beatTimeout < beat {
            throw ServiceEnvironment.Invalid("CHRONIR_BUS_HEARTBEAT_TIMEOUT must be at least CHRONIR_BUS_HEARTBEAT")
        }
        let heartbeat: ZMQHeartbeat? = beat > .zero ? ZMQHeartbeat(interval: beat, timeout: beatTimeout) : nil
        guard let security = try load(principal: principal, environment: environment) else {
            guard try environment.bool("CHRONIR_INSECURE_BUS", false) else {
                throw ServiceEnvironment.Invalid(
                    "no bus keys: set CHRONIR_BUS_KEYS (a directory written by `chronirctl keys generate`), or "
                        + "CHRONIR_BUS_PUBLIC_KEYS and CHRONIR_BUS_SECRET_KEY_FILE; CHRONIR_INSECURE_BUS=1 runs without CURVE")
            }
            logger.warning("INSECURE BUS: CHRONIR_INSECURE_BUS=1 and no keys; every peer that reaches this process's ports is trusted")
            return ZMQContext(ioThreads: ioThreads, discoveryInterval: discovery, heartbeat: heartbeat)
        }
        logger.info("bus secured with CURVE", metadata: ["principal": "\(principal)", "trusted": "\(security.publicKeys.keys.sorted())"])
        return try ZMQContext(ioThreads: ioThreads, security: security, discoveryInterval: discovery, heartbeat: heartbeat,
                              domainReaders: StreamReaders.zapDomains) { decision in
            if let who = decision.principal {
                logger.debug("bus connection accepted", metadata: ["principal": "\(who)", "address": "\(decision.address)"])
            } else {
                logger.warning("bus connection refused", metadata: ["address": "\(decision.address)", "reason": "\(decision.reason)"])
            }
        }
    }

    /// Reads the key files again and gives the context the keys they list now (SIGHUP,
    /// `system.reload-bus-keys`): how a key is rotated without restarting anyone. A new key pair
    /// of this process (its secret key file changed) makes its server sockets bind again.
    /// `deferringOwnKey`: apply such a change that much later, so the answer to the request that
    /// asked for the reload leaves on the connection it came by (a rebind drops connections).
    /// Returns a one-line summary for the log.
    @discardableResult
    public static func reload(principal: String, environment: ServiceEnvironment, context: ZMQContext, logger: Logger,
                              deferringOwnKey delay: Duration? = nil) throws -> String {
        guard let security = try load(principal: principal, environment: environment) else {
            throw ServiceEnvironment.Invalid("no bus keys are configured: nothing to reload")
        }
        let keys = security.acceptedKeys.values.reduce(0) { $0 + $1.count }
        let newPair = context.security.map { $0.keys.publicKey != security.keys.publicKey } ?? false
        let summary = "\(security.acceptedKeys.count) principals, \(keys) keys" + (newPair ? ", a new key pair of \(principal)" : "")
        guard newPair, let delay else {
            try context.reload(security)
            logger.notice("bus keys reloaded", metadata: ["trusted": "\(summary)"])
            return summary
        }
        Task {
            try? await Task.sleep(for: delay)
            do {
                try context.reload(security)
                logger.notice("bus keys reloaded", metadata: ["trusted": "\(summary)"])
            } catch {
                logger.error("reloading the bus keys failed; the keys in use stay", metadata: ["error": "\(error)"])
            }
        }
        return summary
    }

    /// The keys of `principal`, or nil when none are configured.
    public static func load(principal: String, environment: ServiceEnvironment) throws -> BusSecurity? {
        let dir = environment.optional("CHRONIR_BUS_KEYS")
        let publics = environment.optional("CHRONIR_BUS_PUBLIC_KEYS") ?? dir.map { "\($0)/public" }
        let secret = environment.optional("CHRONIR_BUS_SECRET_KEY_FILE") ?? dir.map { KeyFile.secretPath($0, principal) }
        switch (publics, secret) {
        case (nil, nil):
            return nil
        case (let p?, let s?):
            return try BusSecurity.load(principal: principal, publicKeysDirectory: p, secretKeyFile: s)
        default:
            throw ServiceEnvironment.Invalid("CHRONIR_BUS_PUBLIC_KEYS and CHRONIR_BUS_SECRET_KEY_FILE go together (or set CHRONIR_BUS_KEYS)")
        }
    }

    /// Every principal of the suite: the services, the gateway and the operator.
    public static let principals = ServiceDirectory.Name.allCases.map(\.rawValue) + ["gateway", "operator"]
}
