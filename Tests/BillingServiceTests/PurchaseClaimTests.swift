import Foundation
import Support
@testable import SuiteSupport
import Testing

/// Issue 57: store abuse tried through the API — one unbound purchase posted by many accounts
/// at once, a Sandbox (TestFlight) transaction, a restore stuffed with copies.
extension StoreTrustTests {
    @Test("ten accounts posting the same unbound purchase at once: exactly one gets it (200), the others 403 CA007 and stay Free")
    func claimedOnce() async throws {
        let signer = try StoreSigner()
        try await billing.withSuite(signer) { s in
            var users: [TestUser] = []
            for k in 0..<10 { users.append(try await s.signup("Racer\(k)")) }
            let jws = try await signer.sign(TestTransaction(original: "7000001", productId: "com.chronir.premium.monthly",
                                                            expires: Date().addingTimeInterval(3600)))
            let answers = try await withThrowingTaskGroup(of: (String, Int).self) { group in
                for u in users {
                    group.addTask {
                        (u.uid, try await s.request(.POST, "/v1/subscriptions/apple", token: u.token, json: ["signedTransaction": jws]).status)
                    }
                }
                var all: [String: Int] = [:]
                for try await (uid, status) in group { all[uid] = status }
                return all
            }
            #expect(answers.values.filter { $0 == 200 }.count == 1, "\(answers.values.sorted())")
            #expect(answers.values.filter { $0 == 403 }.count == 9, "\(answers.values.sorted())")
            var premium = 0
            for u in users where try await billing.tier(s, u) == "premium" { premium += 1 }
            #expect(premium == 1, "\(premium) accounts hold the one purchase")
        }
    }

    @Test("a Sandbox transaction is 400 CA027 and changes nothing unless CHRONIR_APPLE_ALLOW_SANDBOX; restore refuses more than 50 entries and counts copies once")
    func sandboxAndRestore() async throws {
        let signer = try StoreSigner()
        var sandbox = TestTransaction(original: "7100001", productId: "com.chronir.plus.monthly", expires: Date().addingTimeInterval(3600))
        sandbox.environment = "Sandbox"
        try await billing.withSuite(signer) { s in
            let u = try await s.signup("Tester")
            let r = try await s.request(.POST, "/v1/subscriptions/apple", token: u.token, json: ["signedTransaction": try await signer.sign(sandbox)])
            #expect(r.status == 400 && r.code == "CA027" && r.text.contains("Sandbox"), "\(r.status) \(r.text)")
            #expect(try await billing.tier(s, u) == "free")

            let one = try await signer.sign(TestTransaction(original: "7100002", productId: "com.chronir.plus.monthly",
                                                            expires: Date().addingTimeInterval(3600)))
            let copies = try await s.request(.POST, "/v1/subscriptions/restore", token: u.token,
                                             json: ["signedTransactions": Array(repeating: one, count: 100)])
            #expect(copies.status == 200 && copies.json["tier"]?.stringValue == "plus", "\(copies.status) \(copies.text.prefix(300))")
            var many: [String] = []
            for k in 0..<51 { many.append(try await signer.sign(TestTransaction(original: "72\(k)", productId: "com.chronir.plus.monthly",
                                                                               expires: Date().addingTimeInterval(3600)))) }
            let stuffed = try await s.request(.POST, "/v1/subscriptions/restore", token: u.token, json: ["signedTransactions": many])
            #expect(stuffed.status == 400 && stuffed.code == "CA016", "\(stuffed.status) \(stuffed.text.prefix(300))")
        }
        try await billing.withSuite(signer, extra: ["CHRONIR_APPLE_ALLOW_SANDBOX": "true"]) { s in
            let u = try await s.signup("Tester")
            let r = try await s.request(.POST, "/v1/subscriptions/apple", token: u.token, json: ["signedTransaction": try await signer.sign(sandbox)])
            #expect(r.status == 200 && r.json["tier"]?.stringValue == "plus", "\(r.status) \(r.text)")
        }
    }
}
