import Foundation
import Support
@testable import SuiteSupport
import Testing

extension DenialOfServiceTests {
    @Test("failed logins of one address however spelled (spaces, tab, case, fullwidth) count toward one lockout: 429 CA019 with Retry-After")
    func lockoutKeyIsNormalized() async throws {
        // Five failures free per account; the address's own limit is out of the way, so only the
        // account's lockout can refuse.
        try await withSuite(["CHRONIR_LOGIN_FAILURES_FREE": "5", "CHRONIR_LOGIN_ADDRESS_FAILURES_FREE": "1000"]) { s in
            let signup = try await s.request(.POST, "/v1/auth/signup", json: ["email": "v@x.com", "password": "correct horse", "displayName": "V"])
            #expect(signup.status == 201, "\(signup.text)")
            // Six failures, no spelling used twice: keyed by lower-casing alone each spelling had
            // five free tries of its own and none would lock.
            let spellings = ["v@x.com", " v@x.com", "V@X.COM\t", "ｖ@ｘ.com", "v@x.com ", "\tV@x.Com"]
            for email in spellings {
                let r = try await s.request(.POST, "/v1/auth/login", json: ["email": email, "password": "wrong password"])
                #expect(r.status == 401, "\(email.debugDescription): \(r.status) \(r.text)")
            }
            // The sixth failure started the back-off: yet another spelling, with the right
            // password, is refused before the password is looked at.
            for email in ["ｖ@ｘ.ｃｏｍ", "V@X.COM"] {
                let locked = try await s.request(.POST, "/v1/auth/login", json: ["email": email, "password": "correct horse"])
                #expect(locked.status == 429, "\(email.debugDescription): \(locked.status) \(locked.text)")
                #expect(locked.code == "CA019")
                #expect((Int(locked.header("Retry-After") ?? "") ?? 0) >= 1, "Retry-After: \(locked.header("Retry-After") ?? "none")")
            }
            // Another account from the same address is not locked.
            let other = try await s.request(.POST, "/v1/auth/login", json: ["email": "w@x.com", "password": "wrong password"])
            #expect(other.status == 401, "\(other.status) \(other.text)")
        }
    }
}
