import Logging
import ServiceLifecycle

/// Runs `work` at start and then every `every` until shutdown. A failing round is logged and
/// the next one runs as usual: periodic jobs (sweeps, expiries, keep-alives) never stop a service.
public struct PeriodicService: Service {
    let name: String
    let every: Duration
    let logger: Logger
    let work: @Sendable () async throws -> Void

    public init(_ name: String, every: Duration, logger: Logger, work: @escaping @Sendable () async throws -> Void) {
        self.name = name
        self.every = every
        self.logger = logger
        self.work = work
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await work()
                } catch {
                    logger.error("\(name) failed: \(error)")
                }
                try? await Task.sleep(for: every)
            }
        }
    }
}
