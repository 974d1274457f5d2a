import ArgumentParser
import Foundation
import Messaging
import ServiceKit

/// `chronirctl dead-letters list|replay|drop`: the events a service's consumers recorded
/// instead of applying.
struct DeadLettersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dead-letters",
        abstract: "List, replay or drop the events a service's consumers could not apply.",
        subcommands: [List.self, Replay.self, Drop.self]
    )

    struct Target: ParsableArguments {
        @Option(help: "The consuming service.")
        var service: String

        func name() throws -> ServiceDirectory.Name {
            guard let n = ServiceDirectory.Name(rawValue: service) else {
                throw ValidationError("unknown service \(service); one of \(ServiceDirectory.Name.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return n
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List dead letters, oldest first.")
        @OptionGroup var target: Target
        @Option(help: "Only this stream.") var stream: String?
        @Option(help: "At most this many.") var limit = 100
        @Flag(help: "Print JSON instead of a table.") var json = false

        func run() async throws {
            let (stream, limit) = (stream, limit)
            let r = try await ServiceCall.with(try target.name()) { client in
                try await client.call(SystemMethods.DeadLetters.self, .init(stream: stream, limit: limit))
            }
            if json {
                print(String(decoding: try JSONCoding.encode(r.deadLetters), as: UTF8.self))
            } else if r.deadLetters.isEmpty {
                print("\(target.service): no dead letters")
            } else {
                let date = ISO8601DateFormatter()
                print(Table.render(header: ["STREAM", "SEQ", "TYPE", "RECORDED", "REASON"],
                                   rows: r.deadLetters.map { [$0.stream, "\($0.seq)", $0.type ?? "?", date.string(from: $0.recordedAt), $0.reason] }))
            }
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Apply a dead letter now through the consumer's handlers, then remove it.")
        @OptionGroup var target: Target
        @Option var stream: String
        @Option var seq: Int64

        func run() async throws {
            let ref = DeadLetterRef(stream: stream, seq: seq)
            _ = try await ServiceCall.with(try target.name()) { try await $0.call(SystemMethods.DeadLetterReplay.self, ref) }
            print("\(target.service): applied dead letter \(stream)/\(seq)")
        }
    }

    struct Drop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a dead letter for good.")
        @OptionGroup var target: Target
        @Option var stream: String
        @Option var seq: Int64

        func run() async throws {
            let ref = DeadLetterRef(stream: stream, seq: seq)
            _ = try await ServiceCall.with(try target.name()) { try await $0.call(SystemMethods.DeadLetterDrop.self, ref) }
            print("\(target.service): dropped dead letter \(stream)/\(seq)")
        }
    }
}
