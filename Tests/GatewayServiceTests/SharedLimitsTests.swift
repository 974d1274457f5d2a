import Contracts
import Foundation
import Support
@testable import SuiteSupport
import Testing

/// Issue 57: limits that hold across gateway replicas. Another replica's requests are made as
/// that replica makes them (``ThrottleMethods`` on accounts); this gateway then sees them when
/// its state is shared, and does not when it counts alone (`CHRONIR_THROTTLE_STATE=local`).
@Suite("Limits shared by every gateway replica")
struct SharedLimitsTests {
    @Test("failed logins and sign-ups counted by another replica hold here with the shared state (429 CA019), not with local state")
    func sharedAcrossReplicas() async throws {
        for mode in ["shared", "local"] {
            let gateway = ["CHRONIR_THROTTLE_STATE": mode, "CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR": "3", "CHRONIR_LOGIN_FAILURES_FREE": "2"]
            try await withTestSuite(label: "shared-limits-\(mode)", start: { try $0.startAccountsAndGateway(gateway: gateway) }) { s in
                let email = "owner-\(UInt32.random(in: 0...UInt32.max))@example.com"
                let u = try await s.signup("Owner", email: email, verified: false)
                // Another replica saw three wrong passwords for this account from this address.
                for _ in 0..<3 {
                    _ = try await s.rpc(.accounts, ThrottleMethods.LoginOutcome.self,
                                        .init(account: EmailKey.normalize(email), address: "127.0.0.1", succeeded: false,
                                              accountFailuresFree: 2, addressFailuresFree: 20, maxBackoffSeconds: 900))
                }
                let login = try await s.request(.POST, "/v1/auth/login", json: ["email": email, "password": "correct horse"])
                // And this address's two sign-ups left.
                for _ in 0..<2 {
                    _ = try await s.rpc(.accounts, ThrottleMethods.Take.self, .init(bucket: "signups", key: "127.0.0.1", perHour: 3))
                }
                let signup = try await s.request(.POST, "/v1/auth/signup",
                                                 json: ["email": "late-\(u.uid)@example.com", "password": "correct horse", "displayName": "Late"])
                if mode == "shared" {
                    #expect(login.status == 429 && login.code == "CA019", "failures another replica counted were not seen: \(login.status) \(login.text)")
                    #expect(signup.status == 429 && signup.code == "CA019", "sign-ups another replica counted were not seen: \(signup.status) \(signup.text)")
                    let rows = try await withDatabase(url: s.databaseURL, schema: "accounts") {
                        try await $0.query("SELECT count(*) FROM throttle_buckets WHERE bucket = 'signups'").first(Int64.self)
                    }
                    #expect(rows == 1, "the count lives in accounts, not in the replica: \(String(describing: rows))")
                } else {
                    #expect(login.status == 200, "\(login.status) \(login.text)")
                    #expect(signup.status == 201, "\(signup.status) \(signup.text)")
                }
            }
        }
    }
}
