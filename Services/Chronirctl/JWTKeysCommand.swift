import ArgumentParser
import Contracts
import Foundation
import Messaging
import ServiceKit

extension KeysCommand {
    /// `chronirctl keys rotate-jwt`: the accounts service makes a new access-token signing key
    /// and signs with it at once; the replaced key still verifies the tokens it signed until the
    /// longest token lifetime has passed, then is retired (`docs/operations.md`, "Rotating the
    /// token signing key").
    struct RotateJWT: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-jwt",
            abstract: "Rotate the access-token signing key (the old one verifies until its tokens expired, then is retired).")

        func run() async throws {
            let rotation = try await ServiceCall.with(.accounts) { client in
                try await client.call(AccountsMethods.RotateSigningKey.self, Empty(), timeout: .seconds(10))
            }
            print(Self.summary(rotation))
        }

        /// The line printed after a rotation.
        static func summary(_ rotation: AccountsMethods.RotateSigningKey.Response) -> String {
            guard let previous = rotation.previousKid, let until = rotation.previousRetiresAt else {
                return "rotated: signing with \(rotation.kid) (there was no key before)"
            }
            let formatter = ISO8601DateFormatter()
            return "rotated: signing with \(rotation.kid); \(previous) verifies until \(formatter.string(from: until)), then is retired"
        }
    }
}
