import AccountsService
import Foundation
import Support
@testable import SuiteSupport
import Testing

@Suite("Password reset and email verification")
struct AccountMailTests {
    @Test("a reset mail's token sets a new password once and ends every session; expired and used tokens fail; verification marks the email")
    func resetAndVerify() async throws {
        let smtp = try LocalSMTPServer()
        try await withTestSuite(label: "mail", start: { s in
            try s.start("accounts", migrations: AccountsService.migrations,
                        extra: ["CHRONIR_SMTP_URL": smtp.url, "CHRONIR_MAIL_POLL": "100ms", "CHRONIR_PUBLIC_URL": "https://chronir.example"],
                        build: AccountsService.build)
            try s.startGateway()
        }) { s in
            let u = try await s.signup("Forgetful", verified: false)
            let login = try await s.request(.POST, "/v1/auth/login", json: ["email": u.email, "password": "correct horse"])
            let refresh = try #require(login.json["refreshToken"]?.stringValue)

            // Asked for an unknown address: the same answer, and no mail.
            #expect(try await s.request(.POST, "/v1/auth/password-reset", json: ["email": "nobody-\(UUID().uuidString)@example.com"]).status == 202)
            #expect(try await s.request(.POST, "/v1/auth/password-reset", json: ["email": u.email.uppercased()]).status == 202)
            let subject = "Reset your Chronir password"
            #expect(await eventually(timeout: .seconds(20)) { smtp.messages(to: u.email, subject: subject).count == 1 },
                    "no reset mail arrived: \(smtp.process.output.suffix(1500))")
            let mail = try #require(smtp.messages(to: u.email, subject: subject).first)
            // The link carries the token in its fragment, which no browser sends (issue 74).
            #expect(mail.contains("https://chronir.example/app/#/reset/"))
            #expect(!mail.contains("?token="))
            #expect(smtp.messages.count == 1)
            let token = try #require(LocalSMTPServer.token(in: mail))
            // Only the token's hash is stored.
            let stored = try await s.inDatabase("accounts") {
                try await $0.query("SELECT token_hash FROM email_tokens WHERE purpose = 'reset'").all(String.self)
            }
            #expect(stored.count == 1 && !stored.contains(token))

            #expect(try await s.request(.POST, "/v1/auth/password-reset/confirm", json: ["token": token, "password": "short"]).status == 400)
            let reset = try await s.request(.POST, "/v1/auth/password-reset/confirm", json: ["token": token, "password": "new battery staple"])
            #expect(reset.status == 204, "\(reset.text)")
            let reused = try await s.request(.POST, "/v1/auth/password-reset/confirm", json: ["token": token, "password": "another password"])
            #expect(reused.status == 400 && reused.code == "CA016", "\(reused.text)")
            // Every session ended: refresh tokens at once, access tokens as soon as the gateway hears.
            #expect(try await s.request(.POST, "/v1/auth/refresh", json: ["refreshToken": refresh]).status == 401)
            #expect(await eventually { (try? await s.request(.GET, "/v1/me", token: u.token))?.status == 401 })
            #expect(try await s.request(.POST, "/v1/auth/login", json: ["email": u.email, "password": "correct horse"]).status == 401)
            let relogin = try await s.request(.POST, "/v1/auth/login", json: ["email": u.email, "password": "new battery staple"])
            #expect(relogin.status == 200, "\(relogin.text)")
            let access = try #require(relogin.json["accessToken"]?.stringValue)

            // An expired token fails.
            #expect(try await s.request(.POST, "/v1/auth/password-reset", json: ["email": u.email]).status == 202)
            #expect(await eventually(timeout: .seconds(20)) { smtp.messages(to: u.email, subject: subject).count == 2 })
            let second = try #require(smtp.messages(to: u.email, subject: subject).compactMap(LocalSMTPServer.token(in:)).first { $0 != token })
            try await s.inDatabase("accounts") {
                try await $0.query("UPDATE email_tokens SET expires_at = now() - interval '1 second' WHERE used_at IS NULL")
            }
            #expect(try await s.request(.POST, "/v1/auth/password-reset/confirm", json: ["token": second, "password": "yet another one"]).status == 400)

            // Answering the reset mail proved the address.
            #expect(try await s.request(.GET, "/v1/me", token: access).json["emailVerifiedAt"]?.stringValue != nil)
            // Sent mails keep no usable token.
            let kept = try await s.inDatabase("accounts") {
                try await $0.query("SELECT body FROM mail_outbox WHERE sent_at IS NOT NULL").all(String.self)
            }
            #expect(!kept.isEmpty && kept.allSatisfy { !$0.contains(token) && !$0.contains("token=") }, "\(kept)")

            // Verification, of an account that never answered a mail.
            let v = try await s.signup("Verifier", verified: false)
            let vLogin = try await s.request(.POST, "/v1/auth/login", json: ["email": v.email, "password": "correct horse"])
            let vAccess = try #require(vLogin.json["accessToken"]?.stringValue)
            #expect(try await s.request(.GET, "/v1/me", token: vAccess).json["emailVerifiedAt"] == .null)
            #expect(try await s.request(.POST, "/v1/me/email-verification", token: vAccess).status == 202)
            let verifySubject = "Confirm your email for Chronir"
            #expect(await eventually(timeout: .seconds(20)) { smtp.messages(to: v.email, subject: verifySubject).count == 1 })
            let verifyToken = try #require(smtp.messages(to: v.email, subject: verifySubject).first.flatMap(LocalSMTPServer.token(in:)))
            #expect(try await s.request(.POST, "/v1/auth/verify-email", token: vAccess, json: ["token": verifyToken]).status == 204)
            #expect(try await s.request(.GET, "/v1/me", token: vAccess).json["emailVerifiedAt"]?.stringValue != nil)
            #expect(try await s.request(.POST, "/v1/auth/verify-email", token: vAccess, json: ["token": verifyToken]).status == 400)
        }
        await smtp.stop()
    }
}
