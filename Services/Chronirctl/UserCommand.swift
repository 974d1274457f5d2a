import ArgumentParser
import Contracts
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
    ///
    /// A uid no service holds is "purged" only if it was an account: accounts keeps no row of a
    /// deleted account, so the deletion itself (`accounts.user-deleted` in its stream, kept
    /// for the outbox retention) is the record that it existed. A uid without one is refused
    /// (exit 1, one line) rather than reported purged.
    struct DeletionStatus: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "deletion-status",
            abstract: "Ask every service whether a deleted account's uid is still anywhere in its schema; exit 1 while one holds it, or when the uid is unknown."
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

        func validate() throws {
            guard !uid.trimmingCharacters(in: .whitespaces).isEmpty else { throw ValidationError("the uid is empty") }
            guard timeout > 0 else { throw ValidationError("--timeout must be more than 0 seconds") }
        }

        func run() async throws {
            let uid = self.uid
            let wait = Duration.milliseconds(Int64(timeout * 1000))
            let rows = try await ServiceCall.everyService(timeout: wait) { name, client in
                do {
                    let r = try await client.call(SystemMethods.UserTraces.self, .init(uid: uid))
                    return Row(service: name.rawValue, state: r.rows.isEmpty ? "purged" : "holds the uid", rows: r.rows)
                } catch {
                    return Row(service: name.rawValue, state: "unknown: \(error)", rows: [:])
                }
            }
            // Nothing anywhere: a deleted account, or a uid that never was one.
            if !rows.isEmpty, rows.allSatisfy({ $0.state == "purged" }) {
                let record = try await Self.deletionRecord(of: uid, timeout: wait)
                if !record.deleted {
                    let since = record.oldest.map { " since \(ISOTime.formatSeconds($0))" } ?? ""
                    throw CommandFailure("\(uid): unknown uid — no service holds it and the accounts stream has no deletion of it\(since) "
                                         + "(deletions older than the outbox retention are no longer there)")
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

        /// Whether the `accounts` stream still holds an `accounts.user-deleted` event of `uid`,
        /// and when its oldest kept event was published (nil: the stream is empty).
        static func deletionRecord(of uid: String, timeout: Duration) async throws -> (deleted: Bool, oldest: Date?) {
            try await ServiceCall.with(.accounts) { (client: RPCClient) async throws -> (deleted: Bool, oldest: Date?) in
                var after: Int64 = 0
                var oldest: Date?
                var first = true
                while true {
                    let batch = try await client.call(EventMethods.Replay.self, .init(stream: AccountsEvents.stream, after: after, limit: 5_000),
                                                      timeout: timeout)
                    if first, let e = batch.events.first {
                        oldest = (try? Envelope.decode(Data(e.envelope.utf8)))?.occurredAt
                    }
                    first = false
                    for e in batch.events where e.envelope.contains(AccountsEvents.userDeleted.type) {
                        guard let envelope = try? Envelope.decode(Data(e.envelope.utf8)), envelope.type == AccountsEvents.userDeleted.type,
                              let deleted = try? envelope.decodePayload(AccountsEvents.UserDeleted.self) else { continue }
                        if deleted.uid == uid { return (true, oldest) }
                    }
                    guard let last = batch.events.last?.seq, last < batch.head else { return (false, oldest) }
                    after = last
                }
            }
        }
    }
}
