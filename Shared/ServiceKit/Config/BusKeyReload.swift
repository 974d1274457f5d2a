import Foundation
import Messaging
import ZMQ

/// How the operator makes every service read its bus key files again (`chronirctl keys
/// reload`), in the order that rotates a service's own key with the shortest interruption.
///
/// A service whose public key file lists several keys (its key being rotated) is asked first,
/// through one connection per listed key at once: it answers on the key it serves with (the old
/// one before this reload), then takes its new key pair and binds again. Every other service is
/// asked after it, and rebuilds its connections to it with its new key. Each replica (each RPC
/// endpoint) is asked on its own.
public enum BusKeyReload {
    /// What one replica answered.
    public struct Outcome: Sendable {
        /// The service, with its endpoint when it has several.
        public let target: String
        /// Whether it reloaded.
        public let reloaded: Bool
        /// What it trusts now, or why it failed.
        public let detail: String
    }

    /// Asks `services` (every replica) to reload, with the operator's keys from `environment`.
    public static func run(environment: ServiceEnvironment, services: [ServiceDirectory.Name] = ServiceDirectory.Name.allCases,
                           timeout: Duration) async throws -> [Outcome] {
        guard let security = try BusKeys.load(principal: BusPolicy.operatorPrincipal, environment: environment) else {
            throw ServiceEnvironment.Invalid("no bus keys are configured: nothing to reload")
        }
        let directory = ServiceDirectory(environment: environment)
        let rotating = services.filter { (security.acceptedKeys[$0.rawValue]?.count ?? 0) > 1 }
        var outcomes = await ask(rotating, security: security, directory: directory, timeout: timeout)
        outcomes += await ask(services.filter { !rotating.contains($0) }, security: security, directory: directory, timeout: timeout)
        return outcomes
    }

    /// Asks every replica of `services` at once; each through each of its service's listed keys.
    private static func ask(_ services: [ServiceDirectory.Name], security: BusSecurity, directory: ServiceDirectory,
                            timeout: Duration) async -> [Outcome] {
        await withTaskGroup(of: Outcome.self) { group in
            for service in services {
                let endpoints = directory.rpc(service)
                for endpoint in endpoints {
                    let target = endpoints.count > 1 ? "\(service.rawValue) \(endpoint)" : service.rawValue
                    group.addTask {
                        await askOne(service, endpoint: endpoint, target: target, security: security, timeout: timeout)
                    }
                }
            }
            var all: [Outcome] = []
            for await o in group { all.append(o) }
            return all.sorted { $0.target < $1.target }
        }
    }

    /// Asks one replica through each key its file lists, at once; the first answer wins.
    private static func askOne(_ service: ServiceDirectory.Name, endpoint: String, target: String, security: BusSecurity,
                               timeout: Duration) async -> Outcome {
        let keys = security.acceptedKeys[service.rawValue] ?? []
        return await withTaskGroup(of: Result<String, any Error>.self) { group in
            for key in keys {
                group.addTask {
                    do {
                        var accepted = security.acceptedKeys
                        accepted[service.rawValue] = [key]
                        let context = try ZMQContext(security: BusSecurity(principal: security.principal, keys: security.keys,
                                                                           acceptedKeys: accepted))
                        defer { context.terminate() }
                        let client = try RPCClient(context: context, target: service.rawValue, endpoints: [endpoint],
                                                   source: "operator/keys-reload", telemetry: .discarding())
                        do {
                            let answer = try await client.call(SystemMethods.ReloadBusKeys.self, Empty(), timeout: timeout)
                            await client.close()
                            return .success(answer.trusted)
                        } catch {
                            await client.close()
                            return .failure(error)
                        }
                    } catch {
                        return .failure(error)
                    }
                }
            }
            var failure: (any Error)? = nil
            for await result in group {
                switch result {
                case .success(let trusted):
                    group.cancelAll()
                    return Outcome(target: target, reloaded: true, detail: "reloaded: \(trusted)")
                case .failure(let error):
                    failure = failure ?? error
                }
            }
            return Outcome(target: target, reloaded: false, detail: failure.map { "\($0)" } ?? "no key listed for \(service.rawValue)")
        }
    }
}
