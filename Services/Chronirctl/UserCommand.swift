import ArgumentParser
import Foundation
import Messaging
import ServiceKit

/// `chronirctl user`: account administration.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Account administration.",
        subcommands: [DeletionStatus.self]
    )

    /// `chronirctl user deletion-status <uid>`: each service's confirmation that nothing of a
    /// deleted account is left in its schema.
    struct DeletionStatus: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "deletion-status",
            abstract: "Ask every service whether a deleted account's uid is still anywhere in its schema; exit 1 while one holds it."
        )

        @Argument(help: "The account's uid.")
        var uid: String

        @Option(help: "Seconds to wait for each service.")
        var timeout: Double = 10

        @Flag(help: "Print JSON instead of a table.")
        var json = false

        struct Row: Codable {
            var service: String
            var state: String
            var rows: [String: Int]
        }

        func run() async throws {
            let uid = self.uid
            let rows = try await ServiceCall.everyService(timeout: .milliseconds(Int64(timeout * 1000))) { name, client in
                do {
                    let r = try await client.call(SystemMethods.UserTraces.self, .init(uid: uid))
                    return Row(service: name.rawValue, state: r.rows.isEmpty ? "purged" : "holds the uid", rows: r.rows)
                } catch {
                    return Row(service: name.rawValue, state: "unknown: \(error)", rows: [:])
                }
            }
            if json {
                print(String(decoding: try JSONCoding.encode(rows), as: UTF8.self))
            } else {
                print(Table.render(header: ["SERVICE", "STATE", "WHERE"], rows: rows.map { r in
                    [r.service, r.state, r.rows.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")]
                }))
            }
            if rows.contains(where: { $0.state != "purged" }) { throw ExitCode(1) }
        }
    }
}
