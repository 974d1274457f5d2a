import AccountsService
import Foundation
import GatewayService
import Support
@testable import SuiteSupport
import Testing

/// Attacks that cost the attacker little and the service much, each made through HTTP against
/// a running suite (accounts and the gateway), each refused: lockouts dodged by spelling, token
/// and mail floods, live-stream and connection hoarding, slow headers, key-refresh storms.
/// The tests are in the files named after them (extensions of this suite).
@Suite("No cheap denial of service")
struct DenialOfServiceTests {
    /// Runs `body` with accounts and a gateway whose environment adds `gateway`.
    func withSuite(_ gateway: [String: String] = [:], _ body: (TestSuite) async throws -> Void) async throws {
        try await withTestSuite(label: "dos", start: { try $0.startAccountsAndGateway(gateway: gateway) }, body)
    }

    /// The gateway's port once it listens.
    func gatewayPort(_ s: TestSuite) async throws -> Int {
        _ = try await s.gatewayURL()
        return try #require(s.gatewayPort.withLock { $0 })
    }
}
