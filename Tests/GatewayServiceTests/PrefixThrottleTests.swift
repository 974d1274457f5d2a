import Foundation
@testable import GatewayService
import Messaging
import Testing

/// The throttle's per-address buckets and their /48 (issue 74), on a local state: every bucket
/// an address is counted in is also counted for its /48.
@Suite("Per-address limits and their IPv6 /48")
struct PrefixThrottleTests {
    func throttle() -> AuthThrottle {
        var limits = AuthThrottle.Limits()
        limits.passwordLinksPerHour = 2
        limits.signupsPerAddressPerHour = 2
        limits.tokenConfirmsPerAddressPerHour = 2
        limits.ipv6PrefixShare = 3
        return AuthThrottle(limits: limits, state: LocalThrottleState())
    }

    func admitted(_ attempt: () async throws -> Void) async -> Bool {
        do { try await attempt(); return true } catch { return false }
    }

    @Test("password links from a new /64 (and a new account) each time: the /48 stops them at its share, another /48 is served")
    func passwordLinksByPrefix() async {
        let t = throttle()
        var outcomes: [Bool] = []
        for i in 1...10 {
            outcomes.append(await admitted { try await t.admitPasswordLink(user: "u\(i)", address: "2001:db8:5:\(String(i, radix: 16))::/64") })
        }
        #expect(outcomes.filter { $0 }.count == 6, "\(outcomes)")   // 2 an hour × a share of 3
        #expect(await admitted { try await t.admitPasswordLink(user: "v", address: "2001:db8:6:1::/64") })
    }

    @Test("sign-ups and token confirmations too; IPv4 addresses have no prefix bucket", arguments: ["signups", "confirms"])
    func otherBuckets(bucket: String) async {
        let t = throttle()
        func take(_ address: String) async -> Bool {
            await admitted { bucket == "signups" ? try await t.admitSignup(address: address) : try await t.admitTokenConfirm(address: address) }
        }
        var v6: [Bool] = []
        for i in 1...10 { v6.append(await take("2001:db8:7:\(String(i, radix: 16))::/64")) }
        #expect(v6.filter { $0 }.count == 6, "\(v6)")
        var v4: [Bool] = []
        for i in 1...10 { v4.append(await take("203.0.113.\(i)")) }
        #expect(v4.allSatisfy { $0 }, "\(v4)")
    }
}
