import AccountsService
import Foundation
import Support
@testable import SuiteSupport
import Testing

/// The web app's refresh token kept out of script reach: with `X-Chronir-Session: cookie` the
/// gateway answers it in an HttpOnly cookie scoped to the refresh path, never in the JSON body.
@Suite("Refresh token in an HttpOnly cookie for the browser")
struct RefreshCookieTests {
    /// The value of cookie `name` (the `__Host-` one by default) an answer sets, and the whole header.
    func cookie(_ r: HTTPResult, _ name: String = "__Host-chronir_refresh") -> (value: String, header: String)? {
        guard let header = r.headers.first(where: { $0.0.lowercased() == "set-cookie" && $0.1.hasPrefix("\(name)=") })?.1 else { return nil }
        let value = header.dropFirst("\(name)=".count).prefix { $0 != ";" }
        return (String(value), header)
    }

    @Test("sign-up, refresh and logout in the cookie form: no refresh token in any body; the cookie is __Host- (HttpOnly, Secure, SameSite=Strict, Path=/, no Domain); a refresh needs the cookie and the header; a replayed cookie ends the session; mobile clients keep the JSON form")
    func cookieForm() async throws {
        try await withTestSuite(label: "cookie", start: { try $0.startAccountsAndGateway() }) { s in
            let mode = ["X-Chronir-Session": "cookie"]
            let email = "web-\(UInt32.random(in: 0...UInt32.max))@example.com"
            let signup = try await s.request(.POST, "/v1/auth/signup", json: ["email": email, "password": "correct horse", "displayName": "Web"],
                                             headers: mode)
            #expect(signup.status == 201, "\(signup.text)")
            #expect(signup.json["refreshToken"] == nil && signup.json["accessToken"]?.stringValue != nil, "\(signup.text)")
            let first = try #require(cookie(signup), "no cookie: \(signup.headers)")
            for attribute in ["HttpOnly", "Secure", "SameSite=Strict", "Path=/;"] {
                #expect(first.header.contains(attribute), "\(first.header)")
            }
            #expect(!first.header.lowercased().contains("domain="), "\(first.header)")

            // A refresh with the cookie (no body token) rotates it.
            let refreshed = try await s.request(.POST, "/v1/auth/refresh", json: [:] as [String: String],
                                                headers: mode.merging(["Cookie": "__Host-chronir_refresh=\(first.value)"]) { $1 })
            #expect(refreshed.status == 200, "\(refreshed.text)")
            #expect(refreshed.json["refreshToken"] == nil)
            let second = try #require(cookie(refreshed))
            #expect(second.value != first.value)
            // Without the header (a cross-site form post, a script of another origin) the cookie is not used.
            let noHeader = try await s.request(.POST, "/v1/auth/refresh", json: [:] as [String: String],
                                               headers: ["Cookie": "__Host-chronir_refresh=\(second.value)"])
            #expect(noHeader.status == 401, "\(noHeader.text)")
            // The first cookie again (stolen and replayed): the whole session ends.
            let replay = try await s.request(.POST, "/v1/auth/refresh", json: [:] as [String: String],
                                             headers: mode.merging(["Cookie": "__Host-chronir_refresh=\(first.value)"]) { $1 })
            #expect(replay.status == 401, "\(replay.text)")
            let after = try await s.request(.POST, "/v1/auth/refresh", json: [:] as [String: String],
                                            headers: mode.merging(["Cookie": "__Host-chronir_refresh=\(second.value)"]) { $1 })
            #expect(after.status == 401, "the session survived a replayed refresh token: \(after.text)")

            // Logout clears the cookie.
            let login = try await s.request(.POST, "/v1/auth/login", json: ["email": email, "password": "correct horse"], headers: mode)
            #expect(login.status == 200 && login.json["refreshToken"] == nil, "\(login.text)")
            let access = try #require(login.json["accessToken"]?.stringValue)
            let logout = try await s.request(.POST, "/v1/auth/logout", token: access, json: [:] as [String: String], headers: mode)
            #expect(logout.status == 204, "\(logout.text)")
            #expect(cookie(logout)?.header.contains("Max-Age=0") == true, "\(logout.headers)")

            // A session begun before the prefix (the old cookie on the old path) refreshes once more:
            // the answer sets the new cookie and deletes the old one.
            let relogin = try await s.request(.POST, "/v1/auth/login", json: ["email": email, "password": "correct horse"], headers: mode)
            let old = try #require(cookie(relogin))
            let moved = try await s.request(.POST, "/v1/auth/refresh", json: [:] as [String: String],
                                            headers: mode.merging(["Cookie": "chronir_refresh=\(old.value)"]) { $1 })
            #expect(moved.status == 200, "\(moved.text)")
            #expect(cookie(moved) != nil && cookie(moved, "chronir_refresh")?.header.contains("Max-Age=0; ") == true
                && cookie(moved, "chronir_refresh")?.header.contains("Path=/v1/auth/refresh") == true, "\(moved.headers)")

            // Mobile clients (no header) keep the JSON form and get no cookie.
            let mobile = try await s.request(.POST, "/v1/auth/login", json: ["email": email, "password": "correct horse"])
            #expect(mobile.json["refreshToken"]?.stringValue != nil && cookie(mobile) == nil, "\(mobile.text)")
        }
    }
}
