import ArgumentParser
import Foundation
import Messaging
import ServiceKit

/// Runs `body` with an RPC client to `service`, configured from the environment like the
/// services themselves, and closes everything afterwards.
enum ServiceCall {
    static func with<T: Sendable>(_ service: ServiceDirectory.Name, _ body: (RPCClient) async throws -> T) async throws -> T {
        var env = ProcessInfo.processInfo.environment
        env["CHRONIR_LOG_LEVEL"] = env["CHRONIR_LOG_LEVEL"] ?? "critical"
        let runtime = try ServiceRuntime(service: "chronirctl", environment: ServiceEnvironment(env))
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
