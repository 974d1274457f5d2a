import ArgumentParser
import AsyncHTTPClient
import Contracts
import Foundation
import Messaging
import Synchronization

/// `chronirctl load`: drives the running suite like real users and devices. Users sign up,
/// a share of them form groups (invite + accept), everyone listens on the live stream, alarms
/// are created with due minutes spread over a window with one top-of-minute spike, and after
/// each fire one member marks it done. Measures fire lateness (due instant → push received),
/// completion fan-out (completion sent → other members' pushes), HTTP latencies, errors and
/// throughput with HdrHistogram; counts lost and duplicated pushes. Stops by itself.
struct LoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Drive the running suite with users, groups, alarms and live streams; report lateness and losses.",
        discussion: """
            HTTP goes only to the gateways of --url. Tiers are set with the operator's internal request (as \
            `chronirctl tier set`), to the services named by the usual CHRONIR_<SERVICE>_RPC \
            variables (default loopback). Alarm creation is rate-limited per user \
            (CHRONIR_ALARM_CREATIONS_PER_MINUTE): 429s are waited out and counted, not errors.
            """)

    @Option(help: "The gateway's base URL, or several gateway replicas' separated by commas (devices are spread over them; one that fails is passed over).")
    var url = "http://127.0.0.1:8080"

    @Option(help: "Users to sign up.")
    var users = 1000

    @Option(help: "Alarms in all, each firing once inside the window.")
    var alarms = 20_000

    @Option(help: "Share of users in groups.")
    var groupShare = 0.25

    @Option(help: "Members per group (the owner creates the group's alarms).")
    var groupSize = 5

    @Option(help: "Minutes with fires.")
    var window = 10

    @Option(help: "Fires in the spike minute.")
    var spike = 5000

    @Option(help: "Which minute of the window spikes (default: the middle).")
    var spikeMinute: Int?

    @Option(help: "Seconds at least between the end of setup and the first due minute.")
    var lead = 60

    @Option(help: "Seconds to wait for late pushes after the last due minute.")
    var drain = 60

    @Option(help: "Requests in flight during setup.")
    var concurrency = 32

    @Option(help: "Milliseconds a member waits after a fire before completing it.")
    var think = 200

    @Option(help: "Up to this many milliseconds more, drawn uniformly per completion (people do not all tap Done at once; 0: every completion --think ms after its fire).")
    var thinkSpread = 0

    @Option(help: "Request connections each simulated device may hold at once (4, as iOS's URLSession per host by default; 1 makes a device's requests wait for each other).")
    var connectionsPerUser = 4

    @Option(help: "Share of the fires a member completes (0…1); the others are left uncompleted (0 measures the fire path alone).")
    var completeShare = 1.0

    @Option(help: "Tier given to every user (free, plus, premium; 'keep' to leave it).")
    var tier = "premium"

    @Option(help: "Fraction of requests sent with a sampled traceparent; their trace ids are printed.")
    var traceSample = 0.0

    @Option(help: "Seed of the plan's draws (due minutes, who completes which fire, which are completed, stream reconnects); the same seed and options plan the same run. Default: drawn and printed.")
    var seed: UInt64?

    @Option(help: "Each live stream drops its connection after a time drawn uniformly from 0…2× this many seconds and resumes with Last-Event-ID, as phones moving between networks do (0: only when the server drops it).")
    var reconnectEvery = 0.0

    @Flag(help: "Print the report as JSON.")
    var json = false

    @Option(help: "Also write the JSON report to this file.")
    var jsonFile: String?

    @Flag(help: "Exit with status 1 when a push was lost, duplicated, misrouted or out of order, an accepted alarm went missing, an alarm creation or a completion failed, or a request got a 5xx or a transport error it was not sent again after. A run that could not set itself up exits with status 3 either way.")
    var check = false

    func validate() throws {
        guard users >= 1, alarms >= 1, window >= 1, (1...16).contains(connectionsPerUser), (0...1).contains(groupShare), (0...1).contains(traceSample),
              (0...1).contains(completeShare) else {
            throw ValidationError("users, alarms and window must be ≥ 1; connections-per-user 1…16; group-share, trace-sample and complete-share in 0…1")
        }
        guard think >= 0, thinkSpread >= 0 else { throw ValidationError("think and think-spread are ≥ 0 ms") }
        guard reconnectEvery >= 0, reconnectEvery.isFinite else { throw ValidationError("reconnect-every is ≥ 0 s") }
        guard spike <= alarms, (spikeMinute ?? 0) < window else { throw ValidationError("spike ≤ alarms, spike-minute < window") }
        guard tier == "keep" || Tier(rawValue: tier) != nil else { throw ValidationError("tier is free, plus, premium or keep") }
    }

    func run() async throws {
        let recorder = LoadRecorder()
        let tracker = PushTracker(recorder: recorder)
        // Up to `connectionsPerUser` request connections per simulated device, as a fleet of
        // phones would have: a burst of completions (a user may complete several fires of the
        // same minute) then measures the server, not this client's pool.
        let gateways = Gateways(url)
        let connect: Duration = gateways.bases.count > 1 ? .seconds(2) : .seconds(10)
        let requests = HTTPClients(devices: users, connectionsPerDevice: connectionsPerUser, minimumPerClient: max(16, concurrency),
                                   connectTimeout: connect)
        let streams = HTTPClients(devices: users, connectionsPerDevice: 1, connectTimeout: connect)
        let http = LoadHTTP(clients: requests, gateways: gateways,
                            recorder: recorder, traceSample: traceSample)
        let runner = LoadRunner(options: self, http: http, streams: streams, recorder: recorder, tracker: tracker)
        let outcome: Result<LoadReport, any Error>
        do {
            outcome = .success(try await runner.run())
        } catch {
            outcome = .failure(error)
        }
        await runner.stopListeners()
        await streams.shutdown()
        await requests.shutdown()
        let report: LoadReport
        switch outcome {
        case .success(let r):
            report = r
        case .failure(let failure as LoadSetupFailure):
            // Apart from a run that found a loss: nothing was measured.
            FileHandle.standardError.write(Data("load could not start: \(failure.description)\n".utf8))
            throw ExitCode(3)
        case .failure(let error):
            throw error
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let encoded = try encoder.encode(report)
        if let jsonFile { try encoded.write(to: URL(fileURLWithPath: jsonFile)) }
        if json {
            print(String(decoding: encoded, as: UTF8.self))
        } else {
            print(report.text)
        }
        if check {
            let problems = report.problems
            guard problems.isEmpty else {
                FileHandle.standardError.write(Data(("load check failed: " + problems.joined(separator: "; ") + "\n").utf8))
                throw ExitCode.failure
            }
            FileHandle.standardError.write(Data("load check passed: every push once, no failed request\n".utf8))
        }
    }
}
