import Contracts
import Foundation
import Messaging
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
                    let rows = try await s.inDatabase("accounts") {
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

    @Test("what a stolen gateway key sends the shared limits (empty, long, negative, absurd values) is refused CA016 and counts nothing")
    func badValues() async throws {
        try await withTestSuite(label: "shared-limits-bad", start: { try $0.startAccountsAndGateway() }) { s in
            let long = String(repeating: "k", count: 513)
            let takes: [ThrottleMethods.Take.Request] = [
                .init(bucket: "", key: "1.2.3.4", perHour: 3), .init(bucket: String(repeating: "b", count: 65), key: "k", perHour: 3),
                .init(bucket: "signups", key: long, perHour: 3), .init(bucket: "signups", key: "k", perHour: 0),
                .init(bucket: "signups", key: "k", perHour: -5), .init(bucket: "signups", key: "k", perHour: Int.max),
            ]
            for t in takes {
                await #expect(throws: ServiceError.self, "\(t)") { _ = try await s.rpc(.accounts, ThrottleMethods.Take.self, t) }
            }
            let waits: [ThrottleMethods.LoginWait.Request] = [.init(account: "", address: "1.2.3.4"), .init(account: "a", address: long)]
            for w in waits {
                await #expect(throws: ServiceError.self, "\(w)") { _ = try await s.rpc(.accounts, ThrottleMethods.LoginWait.self, w) }
            }
            let outcomes: [ThrottleMethods.LoginOutcome.Request] = [
                .init(account: long, address: "1.2.3.4", succeeded: false, accountFailuresFree: 5, addressFailuresFree: 20, maxBackoffSeconds: 900),
                .init(account: "a", address: "1.2.3.4", succeeded: false, accountFailuresFree: -1, addressFailuresFree: 20, maxBackoffSeconds: 900),
                .init(account: "a", address: "1.2.3.4", succeeded: false, accountFailuresFree: 5, addressFailuresFree: Int.max, maxBackoffSeconds: 900),
                .init(account: "a", address: "1.2.3.4", succeeded: false, accountFailuresFree: 5, addressFailuresFree: 20, maxBackoffSeconds: Int.max),
                .init(account: "a", address: "1.2.3.4", succeeded: false, accountFailuresFree: 5, addressFailuresFree: 20, maxBackoffSeconds: -1),
            ]
            for o in outcomes {
                do {
                    _ = try await s.rpc(.accounts, ThrottleMethods.LoginOutcome.self, o)
                    Issue.record("accepted \(o)")
                } catch let e as ServiceError {
                    #expect(e.code == .validationFailed, "\(o): \(e)")
                }
            }
            let rows = try await s.inDatabase("accounts") { db in
                let buckets = try await db.query("SELECT count(*) FROM throttle_buckets").first(Int64.self) ?? -1
                let failures = try await db.query("SELECT count(*) FROM throttle_failures").first(Int64.self) ?? -1
                return buckets + failures
            }
            #expect(rows == 0, "a refused request left \(rows) rows")
            // Still serving: a sign-up goes through the shared limits.
            let u = try await s.signup("After")
            #expect(!u.uid.isEmpty)
        }
    }
}
