import ArgumentParser
import Contracts
import Foundation
import Messaging
import ServiceKit

/// `chronirctl tier set --user ID --tier plus`: sets a user's tier on the profile (accounts) and
/// in the alarms service (an operator's override; billing's entitlement events do this in production).
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
            guard let level = Tier(rawValue: tier) else { throw ValidationError("tier must be free, plus or premium") }
            _ = try await ServiceCall.with(.accounts) { client in
                try await client.call(AccountsMethods.SetTier.self, .init(userId: user, tier: level))
            }
            let r = try await ServiceCall.with(.alarms) { client in
                try await client.call(AlarmsMethods.SetTier.self, .init(userId: user, tier: tier))
            }
            print("tier \(r.tier); deactivated \(r.deactivated.count) alarm(s)\(r.deactivated.isEmpty ? "" : ": " + r.deactivated.joined(separator: ", "))")
        }
    }
}
