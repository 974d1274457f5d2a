import Foundation
import InvitationsService
import Support
@testable import SuiteSupport
import Testing

/// Issue 57: what an attacker leaves in an account they signed up for with someone else's
/// address, tried through the API as the attacker would: a push device, a calendar feed and an
/// open group link. The owner's password reset proves the address and takes all of it back.
@Suite("Takeover leftovers: a proven address takes everything back")
struct TakeoverLeftoversTests {
    @Test("the attacker's device, calendar feed and open group link made before the owner's reset are gone after it; the owner is mailed what was removed; what the owner makes afterwards stays")
    func resetTakesBack() async throws {
        try await withTestSuite(label: "takeback", start: { s in
            try s.startCore()
            try s.startInvitations()
        }) { s in
            let victim = "owner-\(UInt32.random(in: 0...UInt32.max))@example.com"
            let attacker = try await s.signup("Mallory", email: victim, verified: false)
            _ = try await s.setTier(attacker, "premium")
            // A push target of the attacker's own, a feed of the account's alarms, an open link.
            let device = try await s.request(.PUT, "/v1/me/devices/mallory-phone", token: attacker.token,
                                             json: ["platform": "ios", "pushToken": "attackers-apns-token"])
            #expect(device.status == 200 || device.status == 201, "\(device.text)")
            let feed = try await s.request(.POST, "/v1/me/calendar-feeds", token: attacker.token, json: ["scope": "me"])
            #expect(feed.status == 201, "\(feed.text)")
            let feedURL = try #require(feed.json["url"]?.stringValue)
            let feedPath = String(feedURL[feedURL.range(of: "/cal/")!.lowerBound...])
            #expect(try await s.request(.GET, feedPath).status == 200)
            let group = try await s.request(.POST, "/v1/groups", token: attacker.token, json: ["name": "Home", "iconName": "house"])
            #expect(group.status == 201, "\(group.text)")
            let groupId = try #require(group.json["id"]?.stringValue)
            var link: HTTPResult?
            #expect(await eventually(timeout: .seconds(15)) {
                link = try? await s.request(.POST, "/v1/invitations", token: attacker.token, json: ["type": "group", "referenceId": groupId])
                return link?.status == 201
            }, "\(link?.status ?? 0) \(link?.text ?? "")")
            let code = try #require(link?.json["id"]?.stringValue)

            // The owner resets the password from the mail only they receive.
            #expect(try await s.request(.POST, "/v1/auth/password-reset", json: ["email": victim]).status == 202)
            let token = try #require(try await PreHijackTests().mailedToken(s, to: victim, subject: "Reset your Chronir password"))
            let reset = try await s.request(.POST, "/v1/auth/password-reset/confirm", json: ["token": token, "password": "owner's own pass"])
            #expect(reset.status == 204, "\(reset.text)")
            let login = try await s.request(.POST, "/v1/auth/login", json: ["email": victim, "password": "owner's own pass"])
            #expect(login.status == 200, "\(login.text)")
            let owner = try #require(login.json["accessToken"]?.stringValue)

            // The device is gone (before the fix: still listed, every push to the attacker).
            let devices = try await s.request(.GET, "/v1/me/devices", token: owner)
            #expect(devices.status == 200 && devices.json["devices"]?.arrayValue?.isEmpty == true, "\(devices.text)")
            // The feed stops answering (before: the owner's alarms, to the attacker, for ever).
            #expect(await eventually(timeout: .seconds(15)) { (try? await s.request(.GET, feedPath))?.status == 404 },
                    "the attacker's calendar feed still answers")
            // The open link is revoked: a stranger can no longer join the owner's group with it.
            let stranger = try await s.signup("Stranger")
            #expect(await eventually(timeout: .seconds(15)) {
                let r = try? await s.request(.GET, "/v1/invitations/\(code)", token: stranger.token)
                return r?.json["status"]?.stringValue == "revoked" || r?.status == 404
            }, "the link made before the reset is still pending")
            let accept = try await s.request(.POST, "/v1/invitations/\(code)/accept", token: stranger.token)
            #expect(accept.status != 200, "\(accept.text)")

            // The owner is told what went.
            let notice = try await s.inDatabase("accounts") {
                try await $0.query("SELECT body FROM mail_outbox WHERE recipient = \(victim) AND subject = 'What we removed from your Chronir account'")
                    .first(String.self)
            }
            #expect(notice?.contains("mallory-phone") == true, "\(notice ?? "no notice mail")")

            // What the owner makes after the reset is theirs and stays.
            let mine = try await s.request(.POST, "/v1/me/calendar-feeds", token: owner, json: ["scope": "me"])
            #expect(mine.status == 201, "\(mine.text)")
            let minePath = try #require(mine.json["url"]?.stringValue.map { String($0[$0.range(of: "/cal/")!.lowerBound...]) })
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await s.request(.GET, minePath).status == 200)
        }
    }
}
