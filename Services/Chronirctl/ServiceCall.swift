import ArgumentParser
import Foundation
import Messaging
import ServiceKit

/// Runs `body` with an RPC client to `service`, configured from the environment like the
/// services themselves, and closes everything afterwards.
enum ServiceCall {
    /// The process environment, quiet by default, with the bus keys of `make run`
    /// (`.run/keys` under the working directory) when none are configured.
    static func operatorEnvironment() -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["CHRONIR_LOG_LEVEL"] = env["CHRONIR_LOG_LEVEL"] ?? "critical"
        let configured = ["CHRONIR_BUS_KEYS", "CHRONIR_BUS_PUBLIC_KEYS", "CHRONIR_BUS_SECRET_KEY_FILE"].contains { env[$0] != nil }
        if !configured, FileManager.default.fileExists(atPath: ".run/keys/secret/operator.key") {
            env["CHRONIR_BUS_KEYS"] = FileManager.default.currentDirectoryPath + "/.run/keys"
        }
        return env
    }

    static func with<T: Sendable>(_ service: ServiceDirectory.Name, _ body: (RPCClient) async throws -> T) async throws -> T {
        let env = operatorEnvironment()
        let runtime = try ServiceRuntime(service: "chronirctl", environment: ServiceEnvironment(env), principal: BusPolicy.operatorPrincipal)
        let client = try runtime.rpcClient(to: service)
        do {
            let result = try await body(client)
            await client.close()
            await runtime.shutdown()
            return result
        } catch {
            await client.close()
            await runtime.shutdown()
            throw CommandFailure(service: service.rawValue, error)
        }
    }

    /// Asks every service at once (each through its own client, waiting `timeout`), with the
    /// operator's key; `body` turns a service's answer, or its failure, into a row. Rows come
    /// back sorted by service name.
    static func everyService<Row: Sendable>(timeout: Duration, excluding: Set<ServiceDirectory.Name> = [],
                                            _ body: @escaping @Sendable (ServiceDirectory.Name, RPCClient) async -> Row) async throws -> [Row] {
        let runtime = try ServiceRuntime(service: "chronirctl", environment: ServiceEnvironment(operatorEnvironment()),
                                         principal: BusPolicy.operatorPrincipal)
        var clients: [(ServiceDirectory.Name, RPCClient)] = []
        for name in ServiceDirectory.Name.allCases where !excluding.contains(name) {
            clients.append((name, try runtime.rpcClient(to: name, timeout: timeout)))
        }
        let rows = await withTaskGroup(of: (String, Row).self) { group in
            for (name, client) in clients {
                group.addTask { (name.rawValue, await body(name, client)) }
            }
            var all: [(String, Row)] = []
            for await r in group { all.append(r) }
            return all.sorted { $0.0 < $1.0 }.map(\.1)
        }
        for (_, c) in clients { await c.close() }
        await runtime.shutdown()
        return rows
    }
}

/// A command that parsed but failed at run time (the service refused, or could not be
/// reached): one line, exit status 1, no usage text (that is for usage errors, status 64).
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }

    init(service: String, _ error: any Error) {
        if let e = error as? ServiceError {
            description = "\(service): \(e.message) (\(e.code.name))"
        } else if let e = error as? CommandFailure {
            description = e.description
        } else {
            description = "\(service): \(error)"
        }
    }
}
