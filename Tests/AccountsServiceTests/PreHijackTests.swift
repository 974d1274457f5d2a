import AccountsService
import Foundation
import Support
@testable import SuiteSupport
import Testing

/// Account pre-hijacking, tried through the API as an attacker would: sign up first with the
/// victim's address and a password, wait for the victim to "Continue with Google".
@Suite("Pre-hijack: provider sign-in joins only proven addresses")
struct PreHijackTests {
    /// Accounts (against a local identity provider) and the gateway, as the sign-in tests run them.
    func withSuite(_ body: (TestSuite, IdentityProviderServer) async throws -> Void) async throws {
        try await ProviderSignInTests().withSuite(body)
    }

    /// The single-use token of the newest mail to `email` with `subject`, read from the mail queue
    /// (no SMTP server here: the queued mail is what the mailbox's owner would receive).
    func mailedToken(_ s: TestSuite, to email: String, subject: String) async throws -> String? {
        try await mailBody(s, to: email, subject: subject).flatMap(LocalSMTPServer.token(in:))
    }

    @Test("a verification link confirms only inside the account it was sent for: the victim who opens the attacker's mail signed out (401) or in another account (403) proves nothing; the mail says what to do; the attacker keeps an unproven account that Google does not join")
    func verificationLinkTakeover() async throws {
        try await withSuite { s, idp in
            let victim = "victim-\(UInt32.random(in: 0...UInt32.max))@gmail.example.com"
            // The attacker signs up with the victim's address and asks for the verification mail.
            let signup = try await s.request(.POST, "/v1/auth/signup", json: ["email": victim, "password": "attacker pass", "displayName": "Mallory"])
            #expect(signup.status == 201, "\(signup.text)")
            let attackerAccess = try #require(signup.json["accessToken"]?.stringValue)
            #expect(try await s.request(.POST, "/v1/me/email-verification", token: attackerAccess).status == 202)
            let mail = try #require(try await mailBody(s, to: victim, subject: "Confirm your email for Chronir"))
            let token = try #require(LocalSMTPServer.token(in: mail))
            // The mail tells the address's owner what to do when the account is not theirs, and
            // its link keeps the token out of every request (a fragment).
            #expect(mail.contains("If you did not make a Chronir account"), "\(mail)")
            #expect(mail.contains("/app/#/forgot"), "\(mail)")
            #expect(mail.contains("/app/#/verify/\(token)") && !mail.contains("?token="), "\(mail)")

            // The victim opens it, signed in to nothing (the app confirmed on open before).
            let open = try await s.request(.POST, "/v1/auth/verify-email", json: ["token": token])
            #expect(open.status == 401 && open.code == "CA012", "\(open.status) \(open.text)")
            #expect(open.text.contains("sign in to the account this mail was sent for"), "\(open.text)")
            // Or signed in to an account of their own with another address.
            let own = try await s.signup("Victimother")
            let inOther = try await s.request(.POST, "/v1/auth/verify-email", token: own.token, json: ["token": token])
            #expect(inOther.status == 403 && inOther.code == "CA007", "\(inOther.status) \(inOther.text)")
            // Nothing is proven: the victim's Google sign-in is still refused, not joined.
            #expect(try await s.request(.GET, "/v1/me", token: attackerAccess).json["emailVerifiedAt"] == .null)
            let google = try await s.request(.POST, "/v1/auth/google", json: ["idToken": try await idp.token("google", sub: "victim-g", email: victim)])
            #expect(google.status == 409 && google.code == "CA033", "\(google.status) \(google.text)")

            // The token was not used up by the refusals: inside its own account it confirms.
            // (Here only to show the refusals were about the account, not the token; the
            // attacker never sees the mail.)
            let inside = try await s.request(.POST, "/v1/auth/verify-email", token: attackerAccess, json: ["token": token])
            #expect(inside.status == 204, "\(inside.status) \(inside.text)")
        }
    }

    /// The newest mail to `email` with `subject`, read from the mail queue.
    func mailBody(_ s: TestSuite, to email: String, subject: String) async throws -> String? {
        var body: String?
        _ = await eventually {
            body = try? await s.inDatabase("accounts") {
                try await $0.query("""
                    SELECT body FROM mail_outbox WHERE recipient = \(email) AND subject = \(subject) ORDER BY id DESC LIMIT 1
                    """).first(String.self)
            }
            return body != nil
        }
        return body
    }

    @Test("an unproven account holding the address is not joined by Google/Apple (409 CA033); the mailbox's owner resets, which proves the address and ends the attacker's sessions, password and linked identities; then Google joins")
    func preHijack() async throws {
        try await withSuite { s, idp in
            let victim = "victim-\(UInt32.random(in: 0...UInt32.max))@gmail.example.com"
            // The attacker signs up first with the victim's address (nobody checks it) and links
            // an Apple identity of their own, to keep a way in.
            let signup = try await s.request(.POST, "/v1/auth/signup", json: ["email": victim, "password": "attacker pass", "displayName": "Mallory"])
            #expect(signup.status == 201, "\(signup.text)")
            let attackerUID = try #require(signup.json["user"]?["uid"]?.stringValue)
            let attackerAccess = try #require(signup.json["accessToken"]?.stringValue)
            let attackerRefresh = try #require(signup.json["refreshToken"]?.stringValue)
            let attackersApple = try await idp.token("apple", sub: "mallory.apple", email: nil, nonce: "m1")
            let linked = try await s.request(.POST, "/v1/auth/link", token: attackerAccess,
                                             json: ["provider": "apple", "identityToken": attackersApple, "nonce": "m1"])
            #expect(linked.status == 200, "\(linked.text)")

            // The victim taps "Continue with Google": Google asserts the address, the account
            // holding it never proved it — refused, not joined.
            let google = { try await idp.token("google", sub: "victim-google", email: victim) }
            let refused = try await s.request(.POST, "/v1/auth/google", json: ["idToken": try await google()])
            #expect(refused.status == 409, "\(refused.text)")
            #expect(refused.code == "CA033", "\(refused.text)")
            #expect(refused.json["user"] == nil && refused.json["accessToken"] == nil)
            // (Before this was fixed, the answer was 200 with the attacker's account.)

            // The victim resets the password from the mail only they receive.
            #expect(try await s.request(.POST, "/v1/auth/password-reset", json: ["email": victim]).status == 202)
            let token = try #require(try await mailedToken(s, to: victim, subject: "Reset your Chronir password"))
            let reset = try await s.request(.POST, "/v1/auth/password-reset/confirm", json: ["token": token, "password": "victim's own pass"])
            #expect(reset.status == 204, "\(reset.text)")

            // The attacker is out: password, refresh token, access token, and the Apple identity
            // linked while the address was unproven.
            #expect(try await s.request(.POST, "/v1/auth/login", json: ["email": victim, "password": "attacker pass"]).status == 401)
            #expect(try await s.request(.POST, "/v1/auth/refresh", json: ["refreshToken": attackerRefresh]).status == 401)
            #expect(await eventually { (try? await s.request(.GET, "/v1/me", token: attackerAccess))?.status == 401 })
            let viaApple = try await s.request(.POST, "/v1/auth/apple",
                                               json: ["identityToken": try await idp.token("apple", sub: "mallory.apple", email: nil, nonce: "m2"), "nonce": "m2"])
            #expect(viaApple.status == 200, "\(viaApple.text)")
            #expect(viaApple.json["user"]?["uid"]?.stringValue != attackerUID, "the attacker's Apple identity still reaches the account")

            // The address is proven now: Google joins the victim's account.
            let login = try await s.request(.POST, "/v1/auth/login", json: ["email": victim, "password": "victim's own pass"])
            #expect(login.status == 200, "\(login.text)")
            #expect(login.json["user"]?["emailVerifiedAt"]?.stringValue != nil, "\(login.text)")
            let joined = try await s.request(.POST, "/v1/auth/google", json: ["idToken": try await google()])
            #expect(joined.status == 200, "\(joined.text)")
            #expect(joined.json["user"]?["uid"]?.stringValue == attackerUID, "the account (now the victim's) is joined")
        }
    }

    @Test("a proven account is joined by a provider that asserts the address; an account made by Google has its address proven (its token says so)")
    func provenJoins() async throws {
        try await withSuite { s, idp in
            let owner = try await s.signup("Prover")   // verified through the API
            let google = try await s.request(.POST, "/v1/auth/google",
                                             json: ["idToken": try await idp.token("google", sub: "g-proven", email: owner.email)])
            #expect(google.status == 200, "\(google.text)")
            #expect(google.json["user"]?["uid"]?.stringValue == owner.uid)

            let fresh = "new-\(UInt32.random(in: 0...UInt32.max))@gmail.example.com"
            let made = try await s.request(.POST, "/v1/auth/google", json: ["idToken": try await idp.token("google", sub: "g-new", email: fresh)])
            #expect(made.status == 200, "\(made.text)")
            #expect(made.json["user"]?["emailVerifiedAt"]?.stringValue != nil, "\(made.text)")
            let access = try #require(made.json["accessToken"]?.stringValue)
            let claims = try #require(access.split(separator: ".").dropFirst().first.flatMap { part -> [String: Any]? in
                var b64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                while b64.count % 4 != 0 { b64 += "=" }
                return Data(base64Encoded: b64).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            })
            #expect(claims["email_verified"] as? Bool == true, "\(claims)")
        }
    }
}
