import AccountsService
import Foundation
import Support
@testable import SuiteSupport
import Testing

/// Sign in with Apple and Google against a local server publishing the providers' JWKS.
@Suite("Sign in with Apple and Google")
struct ProviderSignInTests {
    func withSuite(_ body: (TestSuite, IdentityProviderServer) async throws -> Void) async throws {
        let idp = try IdentityProviderServer()
        try await idp.start()
        defer { idp.stop() }
        try await withTestSuite(label: "idp", start: { try $0.startAccountsAndGateway(accounts: idp.environment()) }) { s in
            try await body(s, idp)
        }
    }

    @Test("valid Apple and Google tokens sign in (same account again, linked by verified email); every bad token is 401 CA025")
    func signIn() async throws {
        try await withSuite { s, idp in
            // Apple, first time: a new account, with a private-relay address and a nonce.
            let relay = "x\(UInt32.random(in: 0...UInt32.max))@privaterelay.appleid.com"
            let apple = try await idp.token("apple", sub: "001234.apple", email: relay, nonce: "raw-nonce-1")
            let first = try await s.request(.POST, "/v1/auth/apple", json: ["identityToken": apple, "nonce": "raw-nonce-1", "displayName": "Ann"])
            #expect(first.status == 200, "\(first.text)")
            let uid = try #require(first.json["user"]?["uid"]?.stringValue)
            #expect(first.json["user"]?["displayName"]?.stringValue == "Ann")
            let access = try #require(first.json["accessToken"]?.stringValue)
            #expect(try await s.request(.GET, "/v1/me", token: access).json["email"]?.stringValue == relay)
            // Again: the same account.
            let again = try await s.request(.POST, "/v1/auth/apple",
                                            json: ["identityToken": try await idp.token("apple", sub: "001234.apple", email: nil, nonce: "n2"), "nonce": "n2"])
            #expect(again.json["user"]?["uid"]?.stringValue == uid, "\(again.text)")

            // Google with the verified email of an email account: linked to it.
            let emailUser = try await s.signup("Bob")
            let google = try await s.request(.POST, "/v1/auth/google",
                                             json: ["idToken": try await idp.token("google", sub: "g-42", email: emailUser.email)])
            #expect(google.status == 200, "\(google.text)")
            #expect(google.json["user"]?["uid"]?.stringValue == emailUser.uid)
            // An unverified email links nothing: a separate account.
            let unverified = try await s.request(.POST, "/v1/auth/google",
                                                 json: ["idToken": try await idp.token("google", sub: "g-43", email: emailUser.email, verified: false)])
            #expect(unverified.status == 200, "\(unverified.text)")
            #expect(unverified.json["user"]?["uid"]?.stringValue != emailUser.uid)
            // An account made by a provider has no password to log in with.
            #expect(try await s.request(.POST, "/v1/auth/login", json: ["email": relay, "password": "anything at all"]).status == 401)

            // Refused, each with the same answer (the failed check is in the log).
            let stranger = IdentityProviderServer.SigningKey(kid: idp.key("apple").kid, key: try IdentityProviderServer.newKey())
            let bad: [(String, String)] = [
                ("expired", try await idp.token("apple", sub: "a", email: nil, expires: Date().addingTimeInterval(-600), issued: Date().addingTimeInterval(-1200))),
                ("issued in the future", try await idp.token("apple", sub: "a", email: nil, issued: Date().addingTimeInterval(3600))),
                ("wrong audience", try await idp.token("apple", sub: "a", email: nil, audience: "com.example.other")),
                ("wrong issuer", try await idp.token("apple", sub: "a", email: nil, issuer: "https://evil.example.com")),
                ("bad signature", try await idp.token("apple", sub: "a", email: nil, key: stranger)),
                ("not a JWT", "abc.def.ghi"),
            ]
            for (name, token) in bad {
                let r = try await s.request(.POST, "/v1/auth/apple", json: ["identityToken": token])
                #expect(r.status == 401, "\(name): \(r.status) \(r.text)")
                #expect(r.code == "CA025", "\(name): \(r.text)")
                #expect(r.json["message"]?.stringValue == "the identity token was refused", "\(name): \(r.text)")
            }
            // Apple's nonce: missing or wrong.
            let withNonce = try await idp.token("apple", sub: "a", email: nil, nonce: "right")
            #expect(try await s.request(.POST, "/v1/auth/apple", json: ["identityToken": withNonce]).status == 401)
            #expect(try await s.request(.POST, "/v1/auth/apple", json: ["identityToken": withNonce, "nonce": "wrong"]).status == 401)
            #expect(try await s.request(.POST, "/v1/auth/apple", json: ["identityToken": withNonce, "nonce": "right"]).status == 200)
            #expect(try await s.request(.POST, "/v1/auth/apple", json: [:]).status == 400)
            // Google's nonce (the web app's redirect flow sends it): checked when given, and when
            // the token carries one (issue 74: before, a token made for a nonce passed without it).
            let webGoogle = try await idp.token("google", sub: "g-nonce", email: nil, nonce: "web-nonce")
            #expect(try await s.request(.POST, "/v1/auth/google", json: ["idToken": webGoogle, "nonce": "other"]).status == 401)
            #expect(try await s.request(.POST, "/v1/auth/google", json: ["idToken": webGoogle, "nonce": "web-nonce"]).status == 200)
            #expect(try await s.request(.POST, "/v1/auth/google", json: ["idToken": webGoogle]).status == 401)
        }
    }

    @Test("after the provider rotates its key, a token with the new kid is accepted at once (the JWKS is refetched), the old key no longer")
    func rotation() async throws {
        try await withSuite { s, idp in
            let old = idp.key("google")
            #expect(try await s.request(.POST, "/v1/auth/google", json: ["idToken": try await idp.token("google", sub: "r1", email: nil)]).status == 200)
            let fetchedBefore = idp.fetches.withLock { $0["google"] ?? 0 }
            try idp.rotate("google")
            let rotated = try await s.request(.POST, "/v1/auth/google", json: ["idToken": try await idp.token("google", sub: "r1", email: nil)])
            #expect(rotated.status == 200, "\(rotated.text)")
            #expect(idp.fetches.withLock { $0["google"] ?? 0 } == fetchedBefore + 1)
            let stale = try await s.request(.POST, "/v1/auth/google", json: ["idToken": try await idp.token("google", sub: "r1", email: nil, key: old)])
            #expect(stale.status == 401, "\(stale.text)")
            // A known kid is served from the cache.
            #expect(try await s.request(.POST, "/v1/auth/google", json: ["idToken": try await idp.token("google", sub: "r1", email: nil)]).status == 200)
            #expect(idp.fetches.withLock { $0["google"] ?? 0 } == fetchedBefore + 1)
        }
    }
}
