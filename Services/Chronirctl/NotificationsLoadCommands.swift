import LoadFixtures
import ArgumentParser
import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization

extension NotificationsCommand {
    /// `chronirctl notifications load --count 20000 --user load-user --port 18099`: fires seeded
    /// into the scheduler for a user whose device is a webhook to a sink this command runs; reports
    /// pushes delivered per second end to end (fire → inbox → delivery → provider).
    struct Load: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Seed N fires for a user whose webhook points at a local sink; report pushes/s end to end.")

        @Option(help: "Fires to seed (all due at the same second).")
        var count = 20_000

        @Option(help: "The user the fires alert (give them a webhook device to http://127.0.0.1:<port>/hook).")
        var user = "load-user"

        @Option(help: "Port of the webhook sink.")
        var port = 18099

        @OptionGroup var options: SchedulerLoadOptions

        func run() async throws {
            let received = Atomic<Int>(0)
            let last = Mutex<Date?>(nil)
            let router = Router()
            router.post("/hook") { request, _ -> HTTPResponse.Status in
                _ = try await request.body.collect(upTo: 1 << 20)
                received.add(1, ordering: .relaxed)
                last.withLock { $0 = Date() }
                return .noContent
            }
            let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
                                  logger: .init(label: "sink", factory: { _ in SwiftLogNoOpLogHandler() }))
            let sink = Task { try await app.runService() }
            defer { sink.cancel() }
            try await Task.sleep(for: .milliseconds(300))
            let at = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + Double(options.lead)).rounded(.up))
            try await options.withScheduler { load in
                try await load.seed(prefix: "push-\(Int(at.timeIntervalSince1970))", dues: Array(repeating: at, count: count), members: [user])
            }
            print("seeded \(count) fires for \(user), due \(ISO8601DateFormatter().string(from: at))")
            let deadline = at.addingTimeInterval(Double(options.timeout))
            while received.load(ordering: .relaxed) < count, Date() < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            let n = received.load(ordering: .relaxed)
            let end = last.withLock { $0 } ?? Date()
            let seconds = max(0.001, end.timeIntervalSince(at))
            print(String(format: "delivered %d/%d pushes; last at +%.2f s after due; %.0f pushes/s end to end", n, count, seconds, Double(n) / seconds))
            if n < count { throw ExitCode.failure }
        }
    }

    /// `chronirctl notifications sse --connections 10000 --url http://127.0.0.1:8080 --token T`:
    /// opens idle live-stream connections and holds them (measure the gateway's memory meanwhile).
    struct SSE: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sse", abstract: "Open N idle /v1/me/events connections and hold them.")

        @Option(help: "Connections to open.")
        var connections = 10_000

        @Option(help: "The gateway's base URL.")
        var url = "http://127.0.0.1:8080"

        @Option(help: "An access token.")
        var token: String

        @Option(help: "Seconds to hold the connections once open.")
        var hold = 10

        func run() async throws {
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool = .init(idleTimeout: .seconds(600), concurrentHTTP1ConnectionsPerHostSoftLimit: connections + 10)
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            let open = Atomic<Int>(0)
            let failed = Atomic<Int>(0)
            let started = ContinuousClock.now
            var tasks: [Task<Void, Never>] = []
            let target = url + "/v1/me/events"
            let bearer = "Bearer \(token)"
            for _ in 0..<connections {
                tasks.append(Task { @Sendable in
                    var request = HTTPClientRequest(url: target)
                    request.headers.add(name: "Authorization", value: bearer)
                    do {
                        let response = try await http.execute(request, timeout: .seconds(3600))
                        guard response.status == .ok else { failed.add(1, ordering: .relaxed); return }
                        var counted = false
                        for try await _ in response.body where !counted {
                            open.add(1, ordering: .relaxed)
                            counted = true
                        }
                    } catch {
                        if !Task.isCancelled { failed.add(1, ordering: .relaxed) }
                    }
                })
            }
            while open.load(ordering: .relaxed) + failed.load(ordering: .relaxed) < connections,
                  started.duration(to: .now) < .seconds(300) {
                try await Task.sleep(for: .milliseconds(200))
            }
            print("open \(open.load(ordering: .relaxed)) connections (\(failed.load(ordering: .relaxed)) failed) in \(started.duration(to: .now))")
            FileHandle.standardOutput.synchronizeFile()
            try await Task.sleep(for: .seconds(hold))
            for t in tasks { t.cancel() }
            try? await http.shutdown()
        }
    }
}
