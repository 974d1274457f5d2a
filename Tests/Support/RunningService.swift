import Foundation
import Persistence
import ServiceKit
import Testing

/// A service running in this test process, on its own ports, with its own database schema.
public final class RunningService: Sendable {
    public let name: String
    public let handle = ShutdownHandle()
    public let task: Task<Void, any Error>
    /// Its runtime (``ServiceRuntime/phase`` says where a stop that does not end is).
    public let runtime: ServiceRuntime

    public init(name: String, environment: [String: String], migrations: [Migration], build: @escaping ServiceHost.Build) throws {
        self.name = name
        let runtime = try ServiceRuntime(service: name, environment: ServiceEnvironment(environment))
        self.runtime = runtime
        let handle = self.handle
        task = Self.host(name, runtime) { try await ServiceHost.run(runtime: runtime, migrations: migrations, handle: handle, handleSignals: false, build: build) }
    }

    /// A service without a database (the gateway).
    public init(name: String, environment: [String: String], build: @escaping ServiceHost.DatabaselessBuild) throws {
        self.name = name
        let runtime = try ServiceRuntime(service: name, environment: ServiceEnvironment(environment))
        self.runtime = runtime
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
    /// not count as a failure. A service still not stopped after `deadline` (its own limits add
    /// up to about 25 s: 10 s of grace, 5 of cancellation, 5 for ZeroMQ) fails the test naming
    /// the phase it is stuck in, and is left behind, so that a hung stop ends the test instead
    /// of the test run.
    public func stop(within deadline: Duration = .seconds(60), fileID: String = #fileID, filePath: String = #filePath,
                     line: Int = #line, column: Int = #column) async {
        let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        runtime.enter("stopping its parts")
        await handle.shutdown()
        let (outcomes, outcome) = AsyncStream<Result<Void, any Error>>.makeStream()
        let task = self.task
        Task {
            do {
                try await task.value
                outcome.yield(.success(()))
            } catch {
                outcome.yield(.failure(error))
            }
            outcome.finish()
        }
        let timer = Task {
            try? await Task.sleep(for: deadline)
            outcome.finish()
        }
        var first = outcomes.makeAsyncIterator()
        let result = await first.next()
        timer.cancel()
        switch result {
        case .success?, .failure(is CancellationError)?:
            break   // stopped (by cancellation: not a failure of its own)
        case .failure(let error)?:
            Issue.record(error, "test service \(name) stopped with an error", sourceLocation: location)
        case nil:
            Issue.record("test service \(name) did not stop within \(deadline); it is at: \(runtime.phase)", sourceLocation: location)
            task.cancel()
        }
    }
}

