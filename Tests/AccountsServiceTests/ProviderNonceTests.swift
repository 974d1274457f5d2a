import Foundation
import Support
@testable import SuiteSupport
import Testing

extension ProviderSignInTests {
    @Test("a Google token made for a nonce is refused without it (a replayed web sign-in), with the wrong one, and accepted with its own; a token without a nonce still signs in (phone apps)")
    func googleNonceRequiredWhenCarried() async throws {
        try await withSuite { s, idp in
            let email = "nonce-\(UInt32.random(in: 0...UInt32.max))@gmail.example.com"
            let withNonce = try await idp.token("google", sub: "g-nonce", email: email, nonce: "web-nonce-1")
            let bare = try await s.request(.POST, "/v1/auth/google", json: ["idToken": withNonce])
            #expect(bare.status == 401 && bare.code == "CA025", "\(bare.status) \(bare.text)")
            let wrong = try await s.request(.POST, "/v1/auth/google", json: ["idToken": withNonce, "nonce": "another"])
            #expect(wrong.status == 401, "\(wrong.text)")
            let right = try await s.request(.POST, "/v1/auth/google", json: ["idToken": withNonce, "nonce": "web-nonce-1"])
            #expect(right.status == 200, "\(right.text)")
            let phone = try await s.request(.POST, "/v1/auth/google", json: ["idToken": try await idp.token("google", sub: "g-nonce", email: email)])
            #expect(phone.status == 200, "\(phone.text)")
        }
    }
}
