import ArgumentParser
import Contracts
import Foundation
import Messaging

/// `chronirctl scheduler status`: replicas, partitions, epochs, timers and fire lateness.
struct SchedulerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scheduler",
        abstract: "Inspect the scheduler replicas.",
        subcommands: [Status.self, Burst.self, Steady.self]
    )

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "Replicas, partitions per replica, epochs, timers and fire lateness.")

        @Flag(help: "Print the raw JSON.")
        var json = false

        func run() async throws {
            let s = try await ServiceCall.with(.scheduler) { client in
                try await client.call(SchedulerMethods.Status.self, Empty())
            }
            if json {
                print(String(decoding: try JSONCoding.encode(s), as: UTF8.self))
                return
            }
            print("partitions \(s.partitions) (\(s.unownedPartitions) unowned)   timers: \(s.timersInTable) in table, "
                  + "\(s.timersInHorizon) within the horizon   fires in the last minute: \(s.firesLastMinute)")
            print("")
            print(Table.render(
                header: ["REPLICA", "ALIVE", "PARTITIONS", "EPOCHS", "IN WHEEL", "FIRES/MIN", "LATENESS p50/p99/max ms"],
                rows: s.replicas.map { r in
                    let epochs = r.minEpoch.map { min in r.maxEpoch.map { $0 == min ? "\(min)" : "\(min)–\($0)" } ?? "\(min)" } ?? "-"
                    return [r.instance, r.alive ? "yes" : "no", "\(r.partitions)", epochs, "\(r.timersInWheel)", "\(r.firesLastMinute)",
                            "\(Int(r.latenessP50Ms))/\(Int(r.latenessP99Ms))/\(Int(r.latenessMaxMs))"]
                }))
        }
    }
}
