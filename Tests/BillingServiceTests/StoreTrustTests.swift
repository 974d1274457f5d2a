@testable import BillingService
import Contracts
import Foundation
import Support
@testable import SuiteSupport
import Testing

/// Store data an attacker can get hold of, tried through the API: a chain Apple issued for
/// something else, another account's signed transaction, guessing the Play push token.
@Suite("Store data is trusted only when it is the store's and the caller's")
struct StoreTrustTests {
    let billing = BillingTests()

    @Test("a transaction signed by a chain without Apple's marker extensions is 400 CA027 and records nothing")
    func markersRequired() async throws {
        let signer = try StoreSigner()
        try await billing.withSuite(signer) { s in
            let u = try await s.signup("Buyer")
            let good = TestTransaction(original: "2000001", productId: "com.chronir.plus.monthly", expires: Date().addingTimeInterval(3600))
            // The trusted root, a valid chain, but the leaf and intermediate are not App Store ones.
            let sameRoot = try await signer.signUnmarked(good)
            let r = try await s.request(.POST, "/v1/subscriptions/apple", token: u.token, json: ["signedTransaction": sameRoot])
            #expect(r.status == 400 && r.code == "CA027", "\(r.text)")
            #expect(r.text.contains("1.2.840.113635.100.6.11.1"), "\(r.text)")
            #expect(try await billing.tier(s, u) == "free")
            let ok = try await s.request(.POST, "/v1/subscriptions/apple", token: u.token, json: ["signedTransaction": try await signer.sign(good)])
            #expect(ok.status == 200, "\(ok.text)")
        }
    }

    @Test("another account's transaction (its appAccountToken) is 403 CA007 for the caller; the buyer's own is taken")
    func appAccountTokenBound() async throws {
        let signer = try StoreSigner()
        try await billing.withSuite(signer) { s in
            let buyer = try await s.signup("Buyer")
            let thief = try await s.signup("Thief")
            var t = TestTransaction(original: "3000001", productId: "com.chronir.premium.monthly", expires: Date().addingTimeInterval(3600))
            t.appAccountToken = buyer.uid.uppercased()
            let jws = try await signer.sign(t)
            let stolen = try await s.request(.POST, "/v1/subscriptions/apple", token: thief.token, json: ["signedTransaction": jws])
            #expect(stolen.status == 403 && stolen.code == "CA007", "\(stolen.text)")
            let restored = try await s.request(.POST, "/v1/subscriptions/restore", token: thief.token, json: ["signedTransactions": [jws]])
            #expect(restored.status == 403 && restored.code == "CA007", "\(restored.text)")
            #expect(try await billing.tier(s, thief) == "free")
            let own = try await s.request(.POST, "/v1/subscriptions/apple", token: buyer.token, json: ["signedTransaction": jws])
            #expect(own.status == 200 && own.json["tier"]?.stringValue == "premium", "\(own.text)")

            // A transaction without appAccountToken, recorded for its buyer, is not moved to
            // whoever sends it next.
            let plain = try await signer.sign(TestTransaction(original: "3000002", productId: "com.chronir.plus.monthly",
                                                              expires: Date().addingTimeInterval(3600)))
            #expect(try await s.request(.POST, "/v1/subscriptions/apple", token: buyer.token, json: ["signedTransaction": plain]).status == 200)
            let moved = try await s.request(.POST, "/v1/subscriptions/apple", token: thief.token, json: ["signedTransaction": plain])
            #expect(moved.status == 403 && moved.code == "CA007", "\(moved.text)")
            #expect(try await billing.tier(s, thief) == "free")
            #expect(try await billing.tier(s, buyer) == "premium")
        }
    }

    @Test("the Play push token is compared whole: a prefix, a longer string or a wrong case is 401")
    func pushTokenCompare() async throws {
        #expect(BillingHandlers.sameSecret("push-secret", "push-secret"))
        for wrong in ["push-secre", "push-secret!", "PUSH-SECRET", "", "x"] {
            #expect(!BillingHandlers.sameSecret(wrong, "push-secret"), "\(wrong)")
        }
        #expect(!BillingHandlers.sameSecret(nil, "push-secret"))
        let signer = try StoreSigner()
        try await billing.withSuite(signer) { s in
            let message: [String: Any] = ["message": ["messageId": "m1", "data": Data(#"{"testNotification":{}}"#.utf8).base64EncodedString()]]
            for wrong in ["push-secre", "push-secret0", "PUSH-SECRET"] {
                let r = try await s.request(.POST, "/v1/webhooks/google?token=\(wrong)", json: message)
                #expect(r.status == 401, "\(wrong): \(r.text)")
            }
            let right = try await s.request(.POST, "/v1/webhooks/google?token=push-secret", json: message)
            #expect(right.status == 200, "\(right.text)")
        }
    }
}
