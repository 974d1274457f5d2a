import AccountsService
import Foundation
import Support
@testable import SuiteSupport
import Testing

/// The settings' list of identities and sessions (issue 74): what an account can see of the
/// ways into it, and end.
@Suite("Identities and sessions: list, unlink, end one, sign out everywhere")
struct SignInSettingsTests {
    @Test("sessions are listed newest first with the caller's marked; ending one stops its refresh token and access token; a stranger's id is 404; signing out everywhere ends them all, the caller's included")
    func sessions() async throws {
        try await ProviderSignInTests().withSuite { s, _ in
            let user = try await s.signup("Sessions")   // sign-up's session, then the login's
            let phone = try await s.request(.POST, "/v1/auth/login", json: ["email": user.email, "password": "correct horse"])
            let phoneAccess = try #require(phone.json["accessToken"]?.stringValue)
            let phoneRefresh = try #require(phone.json["refreshToken"]?.stringValue)

            let listed = try await s.request(.GET, "/v1/me/sessions", token: user.token)
            #expect(listed.status == 200, "\(listed.text)")
            let sessions = try #require(listed.json["sessions"]?.arrayValue)
            #expect(sessions.count == 3, "\(listed.text)")
            #expect(sessions.filter { $0["current"] == .bool(true) }.count == 1, "\(listed.text)")
            let ids = sessions.compactMap { $0["id"]?.stringValue }
            let phoneSession = ids[0]   // newest first: the phone's login
            #expect(sessions[0]["current"] == .bool(false) && sessions[1]["current"] == .bool(true), "\(listed.text)")
            #expect(sessions.allSatisfy { $0["createdAt"]?.stringValue != nil })

            // A stranger cannot end it, nor see it.
            let stranger = try await s.signup("Stranger")
            let foreign = try await s.request(.DELETE, "/v1/me/sessions/\(phoneSession)", token: stranger.token)
            #expect(foreign.status == 404 && foreign.code == "CA017", "\(foreign.status) \(foreign.text)")
            #expect(!(try await s.request(.GET, "/v1/me/sessions", token: stranger.token)).text.contains(phoneSession))
            #expect(try await s.request(.GET, "/v1/me", token: phoneAccess).status == 200)

            // The owner ends the phone's session from the laptop.
            #expect(try await s.request(.DELETE, "/v1/me/sessions/\(phoneSession)", token: user.token).status == 204)
            #expect(try await s.request(.POST, "/v1/auth/refresh", json: ["refreshToken": phoneRefresh]).status == 401)
            #expect(await eventually { (try? await s.request(.GET, "/v1/me", token: phoneAccess))?.status == 401 })
            #expect(try await s.request(.GET, "/v1/me", token: user.token).status == 200, "the laptop stays signed in")
            let after = try await s.request(.GET, "/v1/me/sessions", token: user.token)
            #expect(after.json["sessions"]?.arrayValue?.count == 2 && !after.text.contains(phoneSession), "\(after.text)")
            #expect(try await s.request(.DELETE, "/v1/me/sessions/\(phoneSession)", token: user.token).status == 404, "ended once")

            // Sign out everywhere: both remaining sessions, this one included.
            let all = try await s.request(.DELETE, "/v1/me/sessions", token: user.token)
            #expect(all.status == 200 && all.json["ended"]?.intValue == 2, "\(all.status) \(all.text)")
            #expect(try await s.request(.GET, "/v1/me", token: user.token).status == 401, "refused at once by the gateway that ended it")
            #expect(try await s.request(.POST, "/v1/auth/refresh", json: ["refreshToken": user.refreshToken ?? ""]).status == 401)
            #expect(try await s.request(.GET, "/v1/me", token: stranger.token).status == 200, "another account's session is untouched")
            // Signing in again works, and lists one session.
            let again = try await s.request(.POST, "/v1/auth/login", json: ["email": user.email, "password": "correct horse"])
            let fresh = try #require(again.json["accessToken"]?.stringValue)
            #expect(try await s.request(.GET, "/v1/me/sessions", token: fresh).json["sessions"]?.arrayValue?.count == 1)
        }
    }

    @Test("linked identities are listed by provider; unlinking one stops it signing in to the account; the last way into an account without a password is not unlinked")
    func identities() async throws {
        try await ProviderSignInTests().withSuite { s, idp in
            let user = try await s.signup("Linker")
            #expect(try await s.request(.GET, "/v1/me/identities", token: user.token).json["identities"]?.arrayValue?.isEmpty == true)
            let linked = try await s.request(.POST, "/v1/auth/link", token: user.token,
                                             json: ["provider": "apple", "identityToken": try await idp.token("apple", sub: "linker.apple", email: nil, nonce: "l1"), "nonce": "l1"])
            #expect(linked.status == 200, "\(linked.text)")
            let listed = try await s.request(.GET, "/v1/me/identities", token: user.token)
            let list = try #require(listed.json["identities"]?.arrayValue, "\(listed.text)")
            #expect(list.count == 1 && list[0]["provider"]?.stringValue == "apple" && list[0]["linkedAt"]?.stringValue != nil, "\(listed.text)")

            let notLinked = try await s.request(.DELETE, "/v1/me/identities/google", token: user.token)
            #expect(notLinked.status == 404 && notLinked.code == "CA017", "\(notLinked.text)")
            let unknown = try await s.request(.DELETE, "/v1/me/identities/myspace", token: user.token)
            #expect(unknown.status == 400 && unknown.code == "CA016", "\(unknown.text)")
            #expect(try await s.request(.DELETE, "/v1/me/identities/apple", token: user.token).status == 204)
            #expect(try await s.request(.GET, "/v1/me/identities", token: user.token).json["identities"]?.arrayValue?.isEmpty == true)
            // The Apple identity no longer reaches the account: it makes an account of its own.
            let viaApple = try await s.request(.POST, "/v1/auth/apple",
                                               json: ["identityToken": try await idp.token("apple", sub: "linker.apple", email: nil, nonce: "l2"), "nonce": "l2"])
            #expect(viaApple.status == 200 && viaApple.json["user"]?["uid"]?.stringValue != user.uid, "\(viaApple.text)")

            // An account made by Google has no password: Google is its only way in.
            let made = try await s.request(.POST, "/v1/auth/google",
                                           json: ["idToken": try await idp.token("google", sub: "only-google", email: "only-\(UInt32.random(in: 0...UInt32.max))@gmail.example.com")])
            let access = try #require(made.json["accessToken"]?.stringValue, "\(made.text)")
            let last = try await s.request(.DELETE, "/v1/me/identities/google", token: access)
            #expect(last.status == 400 && last.code == "CA016" && last.text.contains("only way to sign in"), "\(last.status) \(last.text)")
            #expect(try await s.request(.GET, "/v1/me/identities", token: access).json["identities"]?.arrayValue?.count == 1)
        }
    }
}
