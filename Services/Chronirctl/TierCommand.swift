import ArgumentParser
import Contracts
import Foundation
import Messaging
import ServiceKit

/// `chronirctl tier set --user ID --tier plus`: sets a user's tier in the alarms service (an
/// operator's override; billing's entitlement events do this in production).
struct TierCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tier",
        abstract: "Set a user's tier (operators; billing normally does this).",
        subcommands: [Set.self]
    )

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Set a user's tier.")

        @Option(help: "The user id.")
        var user: String

        @Option(help: "free, plus or premium.")
        var tier: String

        func run() async throws {
            let r = try await ServiceCall.with(.alarms) { client in
                try await client.call(AlarmsMethods.SetTier.self, .init(userId: user, tier: tier))
            }
            print("tier \(r.tier); deactivated \(r.deactivated.count) alarm(s)\(r.deactivated.isEmpty ? "" : ": " + r.deactivated.joined(separator: ", "))")
        }
    }
}
