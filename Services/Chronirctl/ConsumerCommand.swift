import ArgumentParser
import Foundation
import Messaging
import ServiceKit

/// `chronirctl consumer skip`: moves a stopped consumer past the event it cannot handle.
struct ConsumerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "consumer",
        abstract: "Act on a service's stream consumers.",
        subcommands: [Skip.self]
    )

    struct Skip: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Skip the event a consumer is stopped at (it is kept as a dead letter, with the reason).",
            discussion: """
                A consumer stops at an event of a type or version its build does not know, and waits to be \
                upgraded. When the event should not be applied at all, skip it: the event is recorded in \
                the service's dead letters (`chronirctl dead-letters list`; `replay` applies it later) and \
                the consumer goes on with the next one. Only the consumer's next event can be skipped.
                """
        )

        @Option(help: "The consuming service (accounts, alarms, scheduler, notifications, invitations, billing).")
        var service: String

        @Option(help: "The stream (the producing service's name).")
        var stream: String

        @Option(help: "The sequence number of the event the consumer is stopped at (the operations page shows it).")
        var seq: Int64

        @Option(help: "Why, recorded with the skipped event.")
        var reason: String

        func run() async throws {
            guard let name = ServiceDirectory.Name(rawValue: service) else {
                throw ValidationError("unknown service \(service); one of \(ServiceDirectory.Name.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            _ = try await ServiceCall.with(name) { client in
                try await client.call(SystemMethods.ConsumerSkip.self, .init(stream: stream, seq: seq, reason: reason))
            }
            print("\(service): skipped \(stream) event \(seq); it is kept as a dead letter")
        }
    }
}
