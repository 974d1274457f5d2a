import Foundation
import Persistence
import ServiceKit
import Testing

/// A service running in this test process, on its own ports, with its own database schema.
public final class RunningService: Sendable {
    public let name: String
    public let handle = ShutdownHandle()
    public let task: Task<Void, any Error>

    public init(name: String, environment: [String: String], migrations: [Migration], build: @escaping ServiceHost.Build) throws {
        self.name = name
        let runtime = try ServiceRuntime(service: name, environment: ServiceEnvironment(environment))
        let handle = self.handle
        task = Self.host(name, runtime) { try await ServiceHost.run(runtime: runtime, migrations: migrations, handle: handle, handleSignals: false, build: build) }
    }

    /// A service without a database (the gateway).
    public init(name: String, environment: [String: String], build: @escaping ServiceHost.DatabaselessBuild) throws {
        self.name = name
        let runtime = try ServiceRuntime(service: name, environment: ServiceEnvironment(environment))
        let handle = self.handle
        task = Self.host(name, runtime) { try await ServiceHost.run(runtime: runtime, handle: handle, handleSignals: false, build: build) }
    }

    /// Runs `run` in a task and shuts the runtime down after it. A service that stops with an
    /// error says so on standard error: tests run the services at log level critical, and a
    /// service that failed to start (a port taken, a migration that failed) would otherwise show
    /// only as a request that timed out.
    private static func host(_ name: String, _ runtime: ServiceRuntime,
                             _ run: @escaping @Sendable () async throws -> Void) -> Task<Void, any Error> {
        Task {
            do {
                try await run()
            } catch {
                FileHandle.standardError.write(Data("test service \(name) stopped with an error: \(error)\n".utf8))
                await runtime.shutdown()
                throw error
            }
            await runtime.shutdown()
        }
    }

    /// Graceful shutdown, waiting for it to finish. A service that stopped with an error of its
    /// own — it died mid-test, failed to start, or its graceful stop failed — fails the running
    /// test with that error (recorded at the caller of `stop()`); one stopped by cancellation does
    /// not count as a failure.
    public func stop(fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column) async {
        await handle.shutdown()
        do {
            try await task.value
        } catch is CancellationError {
            // Stopped by cancellation, not by a failure of its own.
        } catch {
            Issue.record(error, "test service \(name) stopped with an error", sourceLocation: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
        }
    }
}

