import AccountsService
import Foundation
import GatewayService
import Messaging
import Support
@testable import SuiteSupport
import Testing

/// Accounts and the gateway, end to end over HTTP.
@Suite("Auth flows through the gateway")
struct AccountsAuthTests {
    func withSuite(accessTTL: String = "1h", _ body: (TestSuite) async throws -> Void) async throws {
        try await withTestSuite(label: "auth", start: { suite in
            try suite.start("accounts", migrations: AccountsService.migrations, extra: ["CHRONIR_ACCESS_TTL": accessTTL], build: AccountsService.build)
            try suite.start("gateway") { runtime, _ in
                try GatewayService.build(runtime: runtime, config: GatewayConfig(environment: runtime.environment)) { port in suite.gatewayPort.withLock { $0 = port } }
            }
        }, body)
    }

    func signup(_ s: TestSuite, _ email: String, password: String = "correct horse") async throws -> HTTPResult {
        try await s.request(.POST, "/v1/auth/signup", json: ["email": email, "password": password, "displayName": "Lex", "timezone": "Asia/Manila"])
    }

    @Test("sign-up, duplicate email, login, wrong password, GET /v1/me")
    func signupLogin() async throws {
        try await withSuite { s in
        let created = try await signup(s, "lex@example.com")
        #expect(created.status == 201)
        let token = try #require(created.json["accessToken"]?.stringValue)
        #expect(created.json["refreshToken"]?.stringValue?.isEmpty == false)
        #expect(created.json["user"]?["tier"]?.stringValue == "free")
        #expect(created.json["user"]?["settings"]?["timezone"]?.stringValue == "Asia/Manila")

        let duplicate = try await signup(s, "LEX@Example.com")
        #expect(duplicate.status == 409)
        #expect(duplicate.code == "CA018")

        let wrong = try await s.request(.POST, "/v1/auth/login", json: ["email": "lex@example.com", "password": "wrong password"])
        #expect(wrong.status == 401)
        #expect(wrong.code == "CA025")
        let unknown = try await s.request(.POST, "/v1/auth/login", json: ["email": "nobody@example.com", "password": "whatever1"])
        #expect(unknown.status == 401)
        #expect(unknown.code == "CA025")
        let login = try await s.request(.POST, "/v1/auth/login", json: ["email": "Lex@example.com", "password": "correct horse"])
        #expect(login.status == 200)

        let me = try await s.request(.GET, "/v1/me", token: token)
        #expect(me.status == 200)
        #expect(me.json["email"]?.stringValue == "lex@example.com")
        #expect(me.json["displayName"]?.stringValue == "Lex")

        let anonymous = try await s.request(.GET, "/v1/me")
        #expect(anonymous.status == 401)
        #expect(anonymous.code == "CA012")
        let garbage = try await s.request(.GET, "/v1/me", token: "not.a.jwt")
        #expect(garbage.status == 401)
        #expect(garbage.code == "CA012")
        let tampered = try await s.request(.GET, "/v1/me", token: String(token.dropLast(3)) + "AAA")
        #expect(tampered.status == 401)
        }
    }

    @Test("bad input gets 400 naming the field; nothing is created")
    func validation() async throws {
        try await withSuite { s in
        let cases: [([String: Any], String)] = [
            (["email": "not-an-email", "password": "long enough", "displayName": "A"], "email"),
            (["email": "a@example.com", "password": "short", "displayName": "A"], "password"),
            (["email": "a@example.com", "password": "long enough", "displayName": "   "], "displayName"),
            (["email": "a@example.com", "password": "long enough"], "displayName"),
            (["email": "a@example.com", "password": "long enough", "displayName": "A", "timezone": "Mars/Olympus"], "timezone"),
            (["email": "a@example.com", "password": 12345678, "displayName": "A"], "password"),
        ]
        for (body, field) in cases {
            let r = try await s.request(.POST, "/v1/auth/signup", json: body)
            #expect(r.status == 400, "\(body)")
            #expect(r.code == "CA016")
            #expect(r.json["message"]?.stringValue?.contains(field) == true, "\(r.text)")
        }
        let malformed = try await s.request(.POST, "/v1/auth/signup", body: "{not json")
        #expect(malformed.status == 400)
        #expect(malformed.code == "CA016")
        let array = try await s.request(.POST, "/v1/auth/signup", body: "[1,2]")
        #expect(array.status == 400)
        // None of those created an account.
        let ok = try await signup(s, "a@example.com")
        #expect(ok.status == 201)
        let token = try #require(ok.json["accessToken"]?.stringValue)
        let tier = try await s.request(.PATCH, "/v1/me", token: token, json: ["tier": "premium"])
        #expect(tier.status == 400)
        #expect(tier.json["message"]?.stringValue?.contains("tier is read-only") == true)
        let unknownField = try await s.request(.PATCH, "/v1/me", token: token, json: ["favouriteColour": "blue"])
        #expect(unknownField.status == 400)
        let badSettings = try await s.request(.PATCH, "/v1/me", token: token, json: ["settings": ["preAlarmWarningHours": 0]])
        #expect(badSettings.status == 400)
        #expect(badSettings.json["message"]?.stringValue?.contains("settings.preAlarmWarningHours") == true)
        let good = try await s.request(.PATCH, "/v1/me", token: token, json: ["displayName": "Alex", "photoURL": "https://example.com/p.jpg",
                                                                             "settings": ["timezone": "Europe/London", "use24HourFormat": true]])
        #expect(good.status == 200)
        #expect(good.json["displayName"]?.stringValue == "Alex")
        #expect(good.json["settings"]?["timezone"]?.stringValue == "Europe/London")
        #expect(good.json["settings"]?["defaultSnoozeMinutes"]?.intValue == 60)
        let cleared = try await s.request(.PATCH, "/v1/me", token: token, json: ["photoURL": NSNull()])
        #expect(cleared.json["photoURL"] == .null)
        }
    }

    @Test("refresh rotates; reusing a rotated refresh token revokes the whole session")
    func refreshRotation() async throws {
        try await withSuite { s in
        let created = try await signup(s, "r@example.com")
        let access1 = try #require(created.json["accessToken"]?.stringValue)
        let refresh1 = try #require(created.json["refreshToken"]?.stringValue)

        let second = try await s.request(.POST, "/v1/auth/refresh", json: ["refreshToken": refresh1])
        #expect(second.status == 200)
        let refresh2 = try #require(second.json["refreshToken"]?.stringValue)
        let access2 = try #require(second.json["accessToken"]?.stringValue)
        #expect(refresh2 != refresh1)
        #expect(try await s.request(.GET, "/v1/me", token: access2).status == 200)

        // The old token again: reuse. The session ends, the newer refresh token dies with it.
        let reuse = try await s.request(.POST, "/v1/auth/refresh", json: ["refreshToken": refresh1])
        #expect(reuse.status == 401)
        #expect(reuse.code == "CA012")
        #expect(reuse.json["message"]?.stringValue?.contains("already used") == true)
        let afterReuse = try await s.request(.POST, "/v1/auth/refresh", json: ["refreshToken": refresh2])
        #expect(afterReuse.status == 401)
        // Access tokens of the revoked session are refused as soon as the event reaches the gateway.
        let refused = await eventually { (try? await s.request(.GET, "/v1/me", token: access1).status) == 401 }
        #expect(refused)
        #expect(try await s.request(.GET, "/v1/me", token: access2).status == 401)
        // A fresh login works.
        let login = try await s.request(.POST, "/v1/auth/login", json: ["email": "r@example.com", "password": "correct horse"])
        #expect(login.status == 200)
        let unknownRefresh = try await s.request(.POST, "/v1/auth/refresh", json: ["refreshToken": "made-up"])
        #expect(unknownRefresh.status == 401)
        }
    }

    @Test("an expired access token gets 401 CA012 and refresh gives a working one")
    func expiredAccessToken() async throws {
        try await withSuite(accessTTL: "1s") { s in
        let created = try await signup(s, "e@example.com")
        let access = try #require(created.json["accessToken"]?.stringValue)
        let refresh = try #require(created.json["refreshToken"]?.stringValue)
        #expect(try await s.request(.GET, "/v1/me", token: access).status == 200)
        try await Task.sleep(for: .milliseconds(2200))
        let expired = try await s.request(.GET, "/v1/me", token: access)
        #expect(expired.status == 401)
        #expect(expired.code == "CA012")
        #expect(expired.json["message"]?.stringValue?.contains("expired") == true)
        let renewed = try await s.request(.POST, "/v1/auth/refresh", json: ["refreshToken": refresh])
        let fresh = try #require(renewed.json["accessToken"]?.stringValue)
        #expect(try await s.request(.GET, "/v1/me", token: fresh).status == 200)
        }
    }

    @Test("logout ends the session; devices; account deletion publishes accounts.user-deleted")
    func logoutDevicesDeletion() async throws {
        try await withSuite { s in
        let created = try await signup(s, "d@example.com")
        let access = try #require(created.json["accessToken"]?.stringValue)
        let uid = try #require(created.json["user"]?["uid"]?.stringValue)

        let put = try await s.request(.PUT, "/v1/me/devices/iphone-1", token: access, json: ["platform": "ios", "pushToken": "abc123"])
        #expect(put.status == 200)
        #expect(put.json["pushProvider"]?.stringValue == "apns")
        let badDevice = try await s.request(.PUT, "/v1/me/devices/x", token: access, json: ["platform": "nokia"])
        #expect(badDevice.status == 400)
        let webhookMissingURL = try await s.request(.PUT, "/v1/me/devices/w", token: access, json: ["platform": "web"])
        #expect(webhookMissingURL.status == 400)
        let list = try await s.request(.GET, "/v1/me/devices", token: access)
        let devices = try #require(list.json["devices"]?.arrayValue, "\(list.text)")
        #expect(devices.count == 1)
        #expect(try await s.request(.DELETE, "/v1/me/devices/iphone-1", token: access).status == 204)
        #expect(try await s.request(.DELETE, "/v1/me/devices/iphone-1", token: access).status == 404)

        let login = try await s.request(.POST, "/v1/auth/login", json: ["email": "d@example.com", "password": "correct horse"])
        let other = try #require(login.json["accessToken"]?.stringValue)
        #expect(try await s.request(.POST, "/v1/auth/logout", token: access).status == 204)
        let loggedOut = await eventually { (try? await s.request(.GET, "/v1/me", token: access).status) == 401 }
        #expect(loggedOut)
        #expect(try await s.request(.GET, "/v1/me", token: other).status == 200)  // other session unaffected

        #expect(try await s.request(.DELETE, "/v1/me", token: other).status == 204)
        let gone = await eventually { (try? await s.request(.GET, "/v1/me", token: other).status) == 401 }
        #expect(gone)
        let relogin = try await s.request(.POST, "/v1/auth/login", json: ["email": "d@example.com", "password": "correct horse"])
        #expect(relogin.status == 401)
        let types = try await s.inDatabase("accounts") { db in
            try await db.query("SELECT type FROM outbox ORDER BY id").all(String.self)
        }
        #expect(types.contains("accounts.user-deleted"))
        #expect(types.filter { $0 == "accounts.session-revoked" }.count >= 2)
        let envelope = try await s.inDatabase("accounts") { db in
            try await db.query("SELECT envelope FROM outbox WHERE type = 'accounts.user-deleted'").first(String.self)
        }
        let decoded = try Envelope.decode(Data(try #require(envelope).utf8))
        #expect(decoded.actor == uid)
        #expect(decoded.headers["traceparent"] != nil)
        }
    }
}
