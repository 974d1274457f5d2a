import AccountsService
import Foundation
import GatewayService
import Messaging
import Support
@testable import SuiteSupport
import Testing

/// Limits on public input at the gateway: text the database cannot store, bodies over a
/// route's limit, and sign-up and login floods.
@Suite("Public input is bounded and checked")
struct PublicInputTests {
    func withSuite(_ gateway: [String: String] = [:], _ body: (TestSuite) async throws -> Void) async throws {
        try await withTestSuite(label: "input", start: { suite in
            try suite.start("accounts", migrations: AccountsService.migrations, build: AccountsService.build)
            try suite.start("gateway", extra: gateway) { runtime, _ in
                try GatewayService.build(runtime: runtime, config: GatewayConfig(environment: runtime.environment)) { port in suite.gatewayPort.withLock { $0 = port } }
            }
        }, body)
    }

    @Test("U+0000 and unpaired surrogates are 400 CA016 naming the field, in bodies and URLs")
    func unstorableText() async throws {
        try await withSuite { s in
            let nul = try await s.request(.POST, "/v1/auth/signup", body: #"{"email":"a@example.com","password":"pass\u0000word","displayName":"A"}"#,
                                          headers: ["Content-Type": "application/json"])
            #expect(nul.status == 400)
            #expect(nul.code == "CA016")
            #expect(nul.json["message"]?.stringValue?.contains("password") == true)
            let login = try await s.request(.POST, "/v1/auth/login", body: #"{"email":"a\u0000@example.com","password":"x"}"#,
                                            headers: ["Content-Type": "application/json"])
            #expect(login.status == 400)
            #expect(login.json["message"]?.stringValue?.contains("email") == true)
            let lone = try await s.request(.POST, "/v1/auth/signup", body: #"{"email":"b@example.com","password":"long enough","displayName":"x\ud800y"}"#,
                                           headers: ["Content-Type": "application/json"])
            #expect(lone.status == 400)
            #expect(lone.code == "CA016")
            #expect(lone.json["message"]?.stringValue?.contains("displayName") == true)
            let low = try await s.request(.POST, "/v1/auth/login", body: #"{"email":"c@example.com","password":"\udc00"}"#,
                                          headers: ["Content-Type": "application/json"])
            #expect(low.json["message"]?.stringValue?.contains("password") == true)
            let url = try await s.request(.GET, "/v1/me?x=%00")
            #expect(url.status == 400)
            #expect(url.code == "CA016")
            // The service is still there and well.
            let ok = try await s.request(.POST, "/v1/auth/signup", json: ["email": "ok@example.com", "password": "correct horse", "displayName": "Ok"])
            #expect(ok.status == 201)
        }
    }

    @Test("a body over the route's limit is 413 CA024")
    func bodyLimits() async throws {
        try await withSuite { s in
            let big = String(repeating: "x", count: 20_000)
            let r = try await s.request(.POST, "/v1/auth/signup", json: ["email": "big@example.com", "password": big, "displayName": "Big"])
            #expect(r.status == 413)
            #expect(r.code == "CA024")
            let small = try await s.request(.POST, "/v1/auth/signup", json: ["email": "small@example.com", "password": "correct horse", "displayName": "S"])
            #expect(small.status == 201)
            let token = try #require(small.json["accessToken"]?.stringValue)
            let huge = String(repeating: "y", count: 70_000)
            let patch = try await s.request(.PATCH, "/v1/me", token: token, json: ["displayName": huge])
            #expect(patch.status == 413)
        }
    }

    @Test("sign-ups per address and failed logins back off with 429 and Retry-After")
    func throttles() async throws {
        try await withSuite(["CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR": "3", "CHRONIR_LOGIN_FAILURES_FREE": "2"]) { s in
            var statuses: [Int] = []
            for i in 0..<4 {
                let r = try await s.request(.POST, "/v1/auth/signup", json: ["email": "t\(i)@example.com", "password": "correct horse", "displayName": "T"])
                statuses.append(r.status)
                if r.status == 429 {
                    #expect(r.code == "CA019")
                    #expect(Int(r.header("Retry-After") ?? "") ?? 0 >= 1)
                }
            }
            #expect(statuses == [201, 201, 201, 429])
            // Two wrong passwords are free; the third failure locks the account for a while.
            for _ in 0..<3 {
                let wrong = try await s.request(.POST, "/v1/auth/login", json: ["email": "t0@example.com", "password": "wrong password"])
                #expect(wrong.status == 401)
            }
            let locked = try await s.request(.POST, "/v1/auth/login", json: ["email": "t0@example.com", "password": "correct horse"])
            #expect(locked.status == 429)
            #expect(locked.code == "CA019")
            #expect(locked.header("Retry-After") != nil)
            // Another account from the same address is not locked (the address has 3 failures of 20).
            let other = try await s.request(.POST, "/v1/auth/login", json: ["email": "t1@example.com", "password": "correct horse"])
            #expect(other.status == 200)
            // After the back-off the right password works and clears it. Until then every try is
            // refused with CA019 (a refused try does not extend the back-off).
            var after: HTTPResult?
            var refusals: [String] = []
            #expect(await eventually(timeout: .seconds(10), every: .milliseconds(100)) {
                after = try? await s.request(.POST, "/v1/auth/login", json: ["email": "t0@example.com", "password": "correct horse"])
                if let r = after, r.status != 200 { refusals.append("\(r.status) \(r.code ?? "-")") }
                return after?.status == 200
            }, "the right password never worked again: \(refusals)")
            #expect(after?.status == 200)
            #expect(refusals.allSatisfy { $0 == "429 CA019" }, "\(refusals)")
        }
    }
}
