import Foundation
@testable import GatewayService
import Support
@testable import SuiteSupport
import Testing

/// Issue 57: limits that hold behind a reverse proxy, attacked through HTTP. The suite's
/// clients all connect from 127.0.0.1, which plays the ingress: with it trusted, the address
/// each request names in `X-Forwarded-For` is the client.
extension DenialOfServiceTests {
    func signup(_ s: TestSuite, from address: String?, extra: [String: String] = [:]) async throws -> HTTPResult {
        let email = "p-\(UInt32.random(in: 0...UInt32.max))@example.com"
        return try await s.request(.POST, "/v1/auth/signup", json: ["email": email, "password": "correct horse", "displayName": "P"],
                                   headers: (address.map { ["X-Forwarded-For": $0] } ?? [:]).merging(extra) { $1 })
    }

    @Test("behind a trusted proxy each forwarded client has its own sign-up bucket; a spoofed left-hand X-Forwarded-For entry, Forwarded: for=, and a /64 of IPv6 addresses count as the one client they are")
    func trustedProxy() async throws {
        try await withSuite(["CHRONIR_TRUSTED_PROXIES": "127.0.0.1/32, ::1", "CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR": "2"]) { s in
            for _ in 0..<2 { #expect(try await signup(s, from: "203.0.113.5").status == 201) }
            let third = try await signup(s, from: "203.0.113.5")
            #expect(third.status == 429 && third.code == "CA019", "\(third.status) \(third.text)")
            // The client prepends an address of its choosing: the proxy's own entry still counts.
            #expect(try await signup(s, from: "198.51.100.1, 203.0.113.5").status == 429)
            // RFC 7239, with a port.
            #expect(try await signup(s, from: nil, extra: ["Forwarded": "for=\"203.0.113.5:4711\";proto=https"]).status == 429)
            // Another client behind the same proxy is not held back (before: one bucket for all).
            #expect(try await signup(s, from: "203.0.113.6").status == 201)
            // A /64 is one client: two addresses of it, then the third request is refused.
            #expect(try await signup(s, from: "2001:db8:1:2::1").status == 201)
            #expect(try await signup(s, from: "2001:db8:1:2:ffff:ffff:ffff:fffe").status == 201)
            #expect(try await signup(s, from: "2001:db8:1:2::3").status == 429)
            #expect(try await signup(s, from: "2001:db8:1:3::1").status == 201)
        }
    }

    @Test("without trusted proxies X-Forwarded-For is not believed: a client cannot mint buckets by naming addresses")
    func untrustedForwarding() async throws {
        try await withSuite(["CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR": "2"]) { s in
            #expect(try await signup(s, from: "203.0.113.1").status == 201)
            #expect(try await signup(s, from: "203.0.113.2").status == 201)
            let third = try await signup(s, from: "203.0.113.3")
            #expect(third.status == 429, "\(third.status) \(third.text)")
        }
    }

    @Test("targeted lockout: an attacker's wrong passwords from one address lock that address out of the account, not the owner at another; the owner's correct password answers 200")
    func targetedLockout() async throws {
        try await withSuite(["CHRONIR_TRUSTED_PROXIES": "127.0.0.1", "CHRONIR_LOGIN_FAILURES_FREE": "3",
                             "CHRONIR_LOGIN_ADDRESS_FAILURES_FREE": "1000"]) { s in
            let email = "owner-\(UInt32.random(in: 0...UInt32.max))@example.com"
            #expect(try await s.request(.POST, "/v1/auth/signup", json: ["email": email, "password": "correct horse", "displayName": "O"],
                                        headers: ["X-Forwarded-For": "203.0.113.9"]).status == 201)
            let attacker = ["X-Forwarded-For": "198.51.100.7"]
            for _ in 0..<4 {
                _ = try await s.request(.POST, "/v1/auth/login", json: ["email": email, "password": "wrong guess"], headers: attacker)
            }
            let locked = try await s.request(.POST, "/v1/auth/login", json: ["email": email, "password": "correct horse"], headers: attacker)
            #expect(locked.status == 429, "the attacker's address is not locked out: \(locked.status)")
            // Before: the account's lockout answered the owner 429 too, for as long as the attacker kept at it.
            let owner = try await s.request(.POST, "/v1/auth/login", json: ["email": email, "password": "correct horse"],
                                            headers: ["X-Forwarded-For": "203.0.113.9"])
            #expect(owner.status == 200, "the owner is locked out by someone else's guesses: \(owner.status) \(owner.text)")
        }
    }

    @Test("mail and hash floods: verification mails and password links are limited per account (429 CA019 with Retry-After); link refuses a taken address without hashing")
    func mailAndHashFloods() async throws {
        try await withSuite(["CHRONIR_VERIFICATION_MAILS_PER_HOUR": "3", "CHRONIR_PASSWORD_LINKS_PER_HOUR": "4"]) { s in
            let user = try await s.signup("Flood", verified: false)
            for k in 0..<3 {
                let r = try await s.request(.POST, "/v1/me/email-verification", token: user.token)
                #expect(r.status == 202, "mail \(k): \(r.status) \(r.text)")
            }
            let flood = try await s.request(.POST, "/v1/me/email-verification", token: user.token)
            #expect(flood.status == 429 && flood.code == "CA019", "\(flood.status) \(flood.text)")
            #expect(flood.header("Retry-After") != nil)

            let anon = try await s.request(.POST, "/v1/auth/anonymous", json: [:] as [String: String])
            let anonToken = try #require(anon.json["accessToken"]?.stringValue)
            for k in 0..<4 {
                let r = try await s.request(.POST, "/v1/auth/link", token: anonToken, json: ["email": user.email, "password": "another pass \(k)"])
                #expect(r.status == 409, "link \(k): \(r.status) \(r.text)")
            }
            let over = try await s.request(.POST, "/v1/auth/link", token: anonToken, json: ["email": user.email, "password": "yet another pass"])
            #expect(over.status == 429 && over.code == "CA019", "\(over.status) \(over.text)")
        }
    }

    @Test("a full hash queue answers 503 CA022 with Retry-After at once instead of queueing without end")
    func hashQueueBound() async throws {
        try await withTestSuite(label: "hashq", start: {
            try $0.startAccountsAndGateway(accounts: ["CHRONIR_HASH_QUEUE": "1", "CHRONIR_HASH_THREADS": "1", "CHRONIR_SCRYPT_LOG_N": "16"],
                                           gateway: ["CHRONIR_LOGIN_ADDRESS_FAILURES_FREE": "1000", "CHRONIR_LOGIN_FAILURES_FREE": "1000"])
        }) { s in
            _ = try await s.gatewayURL()
            let statuses = try await withThrowingTaskGroup(of: HTTPResult.self) { group in
                for k in 0..<8 {
                    group.addTask {
                        try await s.request(.POST, "/v1/auth/login", json: ["email": "nobody-\(k)@example.com", "password": "wrong password"])
                    }
                }
                var all: [HTTPResult] = []
                for try await r in group { all.append(r) }
                return all
            }
            let busy = statuses.filter { $0.status == 503 }
            #expect(!busy.isEmpty, "every login waited for the hasher: \(statuses.map(\.status))")
            #expect(busy.allSatisfy { $0.code == "CA022" && $0.header("Retry-After") != nil }, "\(busy.map(\.text))")
            #expect(statuses.contains { $0.status == 401 }, "no login was checked at all: \(statuses.map(\.status))")
        }
    }
}
