import Foundation
import Support
@testable import SuiteSupport
import Testing

extension DenialOfServiceTests {
    @Test("made-up reset and verification tokens from one address are 429 CA019 with Retry-After past the limit; good tokens do not use it up")
    func tokenConfirmFlood() async throws {
        try await withSuite(["CHRONIR_TOKEN_CONFIRMS_PER_ADDRESS_PER_HOUR": "3"]) { s in
            // Four users answer their verification mails (POST /v1/auth/verify-email) from this
            // address — more than the limit: a confirmation that succeeds gives its turn back.
            var users: [TestUser] = []
            for name in ["A", "B", "C", "D"] { users.append(try await s.signup(name)) }
            var statuses: [Int] = []
            for i in 0..<6 {
                let r = try await s.request(.POST, "/v1/auth/password-reset/confirm",
                                            json: ["token": "made-up-\(i)-\(UUID().uuidString)", "password": "new battery staple"])
                statuses.append(r.status)
                if r.status == 429 {
                    #expect(r.code == "CA019")
                    #expect((Int(r.header("Retry-After") ?? "") ?? 0) >= 1, "Retry-After: \(r.header("Retry-After") ?? "none")")
                }
            }
            #expect(statuses == [400, 400, 400, 429, 429, 429], "\(statuses)")
            // The verification confirmation shares the address's limit.
            let verify = try await s.request(.POST, "/v1/auth/verify-email", token: users[0].token, json: ["token": "made-up-\(UUID().uuidString)"])
            #expect(verify.status == 429, "\(verify.status) \(verify.text)")
            #expect(verify.header("Retry-After") != nil)
        }
    }

    @Test("password-reset mails to one email address, however spelled, are 429 CA019 with Retry-After past the limit")
    func resetMailsPerEmail() async throws {
        try await withSuite(["CHRONIR_RESET_MAILS_PER_EMAIL_PER_HOUR": "2"]) { s in
            var statuses: [Int] = []
            for email in ["r@x.com", " R@X.com", "ｒ@ｘ.com\t"] {
                let r = try await s.request(.POST, "/v1/auth/password-reset", json: ["email": email])
                statuses.append(r.status)
                if r.status == 429 {
                    #expect(r.code == "CA019")
                    #expect((Int(r.header("Retry-After") ?? "") ?? 0) >= 1)
                }
            }
            #expect(statuses == [202, 202, 429], "\(statuses)")
            // Another address is not affected (the same answer whether or not it has an account).
            let other = try await s.request(.POST, "/v1/auth/password-reset", json: ["email": "q@x.com"])
            #expect(other.status == 202, "\(other.status) \(other.text)")
        }
    }

    @Test("an address over 254 code points (as JSON Schema counts: a decomposed â is two) is 400 CA016 on reset and sign-up, before anything is queued")
    func addressLengthInCodePoints() async throws {
        try await withSuite { s in
            let long = "a\u{302}" + String(repeating: "b", count: 241) + "@example.com"   // 254 graphemes, 255 code points
            #expect(long.count == 254 && long.unicodeScalars.count == 255)
            let reset = try await s.request(.POST, "/v1/auth/password-reset", json: ["email": long])
            #expect(reset.status == 400 && reset.code == "CA016", "\(reset.status) \(reset.text)")
            let signup = try await s.request(.POST, "/v1/auth/signup", json: ["email": long, "password": "correct horse", "displayName": "L"])
            #expect(signup.status == 400 && signup.code == "CA016", "\(signup.status) \(signup.text)")
        }
    }
}
