import AccountsService
import AlarmsService
import Foundation
import Support
@testable import SuiteSupport
import Testing

/// Anonymous accounts, their upgrade by linking credentials, and the import of local alarms.
@Suite("Anonymous accounts and upgrade")
struct AnonymousUpgradeTests {
    @Test("an anonymous account imports its local alarms once, cannot subscribe, and keeps its uid and alarms when it links an email or a Google identity")
    func anonymousUpgrade() async throws {
        let idp = try IdentityProviderServer()
        try await idp.start()
        defer { idp.stop() }
        try await withTestSuite(label: "anon", start: { s in
            try s.start("accounts", migrations: AccountsService.migrations, extra: idp.environment(), build: AccountsService.build)
            try s.start("alarms", migrations: AlarmsService.migrations, extra: ["CHRONIR_ALARM_CREATIONS_PER_MINUTE": "1"], build: AlarmsService.build)
            try s.startGateway()
        }) { s in
            let anon = try await s.request(.POST, "/v1/auth/anonymous", json: ["displayName": "Guest", "timezone": "Europe/Paris"])
            #expect(anon.status == 201, "\(anon.text)")
            let uid = try #require(anon.json["user"]?["uid"]?.stringValue)
            let token = try #require(anon.json["accessToken"]?.stringValue)
            #expect(anon.json["user"]?["email"]?.stringValue == "")
            #expect(anon.json["user"]?["tier"]?.stringValue == "free")

            // The import: client ids, the per-minute creation limit (1 here) does not apply.
            let ids = [UUID().uuidString.lowercased(), UUID().uuidString.lowercased()]
            func local(_ id: String, _ title: String) -> [String: Any] {
                ["id": id, "title": title, "schedule": scheduleJSON("monthly", day: 15)]
            }
            let batch = ["alarms": [local(ids[0], "Rent"), local(ids[1], "Filter")]]
            let first = try await s.request(.POST, "/v1/alarms:batchImport", token: token, json: batch)
            #expect(first.status == 200, "\(first.text)")
            #expect(first.json["created"]?.intValue == 2)
            let migratedAt = try #require(first.json["migratedAt"]?.stringValue, "\(first.text)")
            let again = try await s.request(.POST, "/v1/alarms:batchImport", token: token, json: batch)
            #expect(again.json["created"]?.intValue == 0, "\(again.text)")
            #expect(again.json["results"]?.arrayValue?.map { $0["status"]?.stringValue } == ["unchanged", "unchanged"])
            #expect(again.json["migratedAt"]?.stringValue == migratedAt, "migratedAt is set once")
            // A third alarm is over the Free limit: that one fails, with its reason.
            let third = try await s.request(.POST, "/v1/alarms:batchImport", token: token,
                                            json: ["alarms": [local(UUID().uuidString.lowercased(), "Third")]])
            #expect(third.json["failed"]?.intValue == 1, "\(third.text)")
            #expect(third.json["results"]?.arrayValue?.first?["error"]?["code"]?.stringValue == "CA001", "\(third.text)")
            #expect(try await s.request(.POST, "/v1/alarms:batchImport", token: token,
                                        json: ["alarms": [["title": "No id", "schedule": scheduleJSON()]]]).status == 400)
            let tooMany = (0..<501).map { local("bulk-\($0)", "Bulk") }
            #expect(try await s.request(.POST, "/v1/alarms:batchImport", token: token, json: ["alarms": tooMany]).status == 400)

            // No purchase before credentials.
            let buy = try await s.request(.POST, "/v1/subscriptions/apple", token: token, json: ["signedTransaction": "x.y.z"])
            #expect(buy.status == 403, "\(buy.text)")
            #expect(buy.code == "CA007")

            // Linking an email and password keeps the uid and the alarms.
            let email = "guest-\(UInt32.random(in: 0...UInt32.max))@example.com"
            let linked = try await s.request(.POST, "/v1/auth/link", token: token, json: ["email": email, "password": "correct horse"])
            #expect(linked.status == 200, "\(linked.text)")
            #expect(linked.json["uid"]?.stringValue == uid)
            #expect(linked.json["email"]?.stringValue == email)
            let login = try await s.request(.POST, "/v1/auth/login", json: ["email": email, "password": "correct horse"])
            #expect(login.json["user"]?["uid"]?.stringValue == uid, "\(login.text)")
            let fresh = try #require(login.json["accessToken"]?.stringValue)
            let list = try await s.request(.GET, "/v1/alarms", token: fresh)
            #expect(Set(list.json["alarms"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []) == Set(ids), "\(list.text)")
            #expect(try await s.request(.POST, "/v1/auth/link", token: fresh, json: ["email": email, "password": "another one"]).code == "CA018")
            let buyNow = try await s.request(.POST, "/v1/subscriptions/apple", token: fresh, json: ["signedTransaction": "x.y.z"])
            #expect(buyNow.status != 403, "a linked account is still refused: \(buyNow.text)")

            // Another anonymous account links a Google identity; Google sign-in then reaches it.
            let other = try await s.request(.POST, "/v1/auth/anonymous", json: [:])
            let otherUid = try #require(other.json["user"]?["uid"]?.stringValue)
            let otherToken = try #require(other.json["accessToken"]?.stringValue)
            let gmail = "guest-\(UInt32.random(in: 0...UInt32.max))@gmail.com"
            let idToken = try await idp.token("google", sub: "g-anon-1", email: gmail)
            let viaGoogle = try await s.request(.POST, "/v1/auth/link", token: otherToken, json: ["provider": "google", "idToken": idToken])
            #expect(viaGoogle.status == 200, "\(viaGoogle.text)")
            #expect(viaGoogle.json["uid"]?.stringValue == otherUid)
            #expect(viaGoogle.json["email"]?.stringValue == gmail)
            let signIn = try await s.request(.POST, "/v1/auth/google", json: ["idToken": try await idp.token("google", sub: "g-anon-1", email: gmail)])
            #expect(signIn.json["user"]?["uid"]?.stringValue == otherUid, "\(signIn.text)")
            // The same identity cannot be linked to a second account; an email in use cannot be taken.
            let third2 = try #require(try await s.request(.POST, "/v1/auth/anonymous", json: [:]).json["accessToken"]?.stringValue)
            #expect(try await s.request(.POST, "/v1/auth/link", token: third2, json: ["provider": "google", "idToken": idToken]).code == "CA018")
            #expect(try await s.request(.POST, "/v1/auth/link", token: third2, json: ["email": email, "password": "correct horse"]).code == "CA018")
        }
    }
}
