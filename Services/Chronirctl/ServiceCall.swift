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
            throw ValidationError("\(error)")
        }
    }
}
