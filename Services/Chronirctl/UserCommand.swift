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
            let runtime = try ServiceRuntime(service: "chronirctl", environment: ServiceEnvironment(ServiceCall.operatorEnvironment()),
                                             principal: BusPolicy.operatorPrincipal)
            let timeout = Duration.milliseconds(Int64(self.timeout * 1000))
            var clients: [(ServiceDirectory.Name, RPCClient)] = []
            for name in ServiceDirectory.Name.allCases {
                clients.append((name, try runtime.rpcClient(to: name, timeout: timeout)))
            }
            let uid = self.uid
            let rows = await withTaskGroup(of: Row.self) { group in
                for (name, client) in clients {
                    group.addTask {
                        do {
                            let r = try await client.call(SystemMethods.UserTraces.self, .init(uid: uid))
                            return Row(service: name.rawValue, state: r.rows.isEmpty ? "purged" : "holds the uid", rows: r.rows)
                        } catch {
                            return Row(service: name.rawValue, state: "unknown: \(error)", rows: [:])
                        }
                    }
                }
                var all: [Row] = []
                for await r in group { all.append(r) }
                return all.sorted { $0.service < $1.service }
            }
            for (_, c) in clients { await c.close() }
            await runtime.shutdown()
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
