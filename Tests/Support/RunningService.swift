import Foundation
import Persistence
import ServiceKit

/// A service running in this test process, on its own ports, with its own database schema.
public final class RunningService: Sendable {
    public let name: String
    public let handle = ShutdownHandle()
    public let task: Task<Void, any Error>

    public init(name: String, environment: [String: String], migrations: [Migration], build: @escaping ServiceHost.Build) throws {
        self.name = name
        let runtime = try ServiceRuntime(service: name, environment: ServiceEnvironment(environment))
        let handle = self.handle
        task = Task {
            try await ServiceHost.run(runtime: runtime, migrations: migrations, handle: handle, handleSignals: false, build: build)
            await runtime.shutdown()
        }
    }

    /// A service without a database (the gateway).
    public init(name: String, environment: [String: String], build: @escaping ServiceHost.DatabaselessBuild) throws {
        self.name = name
        let runtime = try ServiceRuntime(service: name, environment: ServiceEnvironment(environment))
        let handle = self.handle
        task = Task {
            try await ServiceHost.run(runtime: runtime, handle: handle, handleSignals: false, build: build)
            await runtime.shutdown()
        }
    }

    /// Graceful shutdown, waiting for it to finish.
    public func stop() async {
        await handle.shutdown()
        _ = try? await task.value
    }
}

