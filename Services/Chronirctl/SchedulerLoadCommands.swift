import LoadFixtures
import ArgumentParser
import Foundation
import Logging
import Persistence
import SchedulerService

/// Load runs against running scheduler replicas: timers seeded in bulk into the scheduler
/// schema (`DATABASE_URL`), then watched until every fire is recorded and handed on.
struct SchedulerLoadOptions: ParsableArguments {
    @Option(help: "Partitions of the deployment (CHRONIR_SCHEDULER_PARTITIONS).")
    var partitions = 256

    @Option(help: "Seconds from now until the first fire is due (time for the replicas to load it).")
    var lead = 10

    @Option(help: "Give up after this many seconds past the last due instant.")
    var timeout = 120

    /// Opens the scheduler schema, runs `body`, closes.
    func withScheduler<T: Sendable>(_ body: (SchedulerLoad) async throws -> T) async throws -> T {
        let env = ProcessInfo.processInfo.environment
        let config = try DatabaseConfig.fromEnvironment(env, defaultSchema: "scheduler")
        let database = try Database(config: config, logger: Logger(label: "chronirctl", factory: { _ in SwiftLogNoOpLogHandler() }))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await database.run() }
            defer { group.cancelAll() }
            return try await body(SchedulerLoad(database: database, partitions: partitions))
        }
    }

    /// Seeds `dues`, waits for all of them, prints the figures.
    func run(prefix: String, dues: [Date]) async throws {
        try await withScheduler { load in
            let seedStart = ContinuousClock.now
            let since = Date()
            try await load.seed(prefix: prefix, dues: dues)
            print("seeded \(dues.count) timers in \(seedStart.duration(to: .now)); first due \(ISO8601DateFormatter().string(from: dues.min()!))")
            let last = dues.max()!
            let deadline = last.addingTimeInterval(Double(timeout))
            var recordedAt: Date? = nil
            var handedAt = Date()
            while Date() < deadline {
                let (recorded, published) = try await load.counts(since: since)
                if recorded >= dues.count, recordedAt == nil { recordedAt = Date() }
                handedAt = Date()
                if recorded >= dues.count, published >= dues.count { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            let progress = try await load.progress(prefix: prefix)
            let first = dues.min()!
            print("recorded \(progress.recorded)/\(dues.count), handed on \(progress.published)/\(dues.count)")
            if let recordedAt {
                print(String(format: "all recorded %.2f s after the first due instant (%.2f s after the last); all handed on after %.2f s",
                             recordedAt.timeIntervalSince(first), recordedAt.timeIntervalSince(last), handedAt.timeIntervalSince(first)))
                if let lastFired = progress.lastFiredAt {
                    print(String(format: "last fire record at +%.3f s; fires/s over the run: %.0f", lastFired.timeIntervalSince(first),
                                 Double(dues.count) / max(0.001, lastFired.timeIntervalSince(first))))
                }
            }
            print(String(format: "lateness (due → fire transaction) p50 %.1f ms, p99 %.1f ms, max %.1f ms",
                         progress.p50Ms, progress.p99Ms, progress.maxMs))
            if progress.recorded < dues.count || progress.published < dues.count { throw ExitCode.failure }
        }
    }
}

extension SchedulerCommand {
    /// `chronirctl scheduler burst --count 100000`: every timer due at the same second.
    struct Burst: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Seed N timers due at the same second; report the time until all are recorded and handed on.")

        @Option(help: "Timers due at once.")
        var count = 100_000

        @OptionGroup var options: SchedulerLoadOptions

        func run() async throws {
            let at = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + Double(options.lead)).rounded(.up))
            try await options.run(prefix: "burst-\(Int(at.timeIntervalSince1970))", dues: Array(repeating: at, count: count))
        }
    }

    /// `chronirctl scheduler steady --rate 2000 --seconds 60`: evenly spread fires.
    struct Steady: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Seed fires at a steady rate; report fire lateness.")

        @Option(help: "Fires per second.")
        var rate = 2000

        @Option(help: "Seconds of fires.")
        var seconds = 60

        @OptionGroup var options: SchedulerLoadOptions

        func run() async throws {
            let start = Date().addingTimeInterval(Double(options.lead))
            let total = rate * seconds
            let dues = (0..<total).map { start.addingTimeInterval(Double($0) / Double(rate)) }
            try await options.run(prefix: "steady-\(Int(start.timeIntervalSince1970))", dues: dues)
        }
    }
}
