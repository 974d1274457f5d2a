import AccountsService
import AlarmsService
import BillingService
import Contracts
import Foundation
import Messaging
import NIOHTTP1
import Support
@testable import SuiteSupport
import Testing

/// The anonymous and "other user" columns of `docs/routes-by-principal.md` (issue 57, item 9),
/// tried against the running suite. The anonymous sweep reads the table itself: every row whose
/// anonymous answer is 401 `CA012` is asked without a token, so a route added to the table is
/// tried the day it is. The other-user rows ask for another account's feed, notification,
/// device, invitation, session and alarm by their real ids.
@Suite("Routes by principal: anonymous and another user")
struct CrossAccountMatrixTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// (method, path) of every table row whose anonymous column says `401 CA012`; `:name`
    /// segments become a made-up id.
    static func anonymousRows() throws -> [(HTTPMethod, String)] {
        let text = try String(contentsOf: root.appendingPathComponent("docs/routes-by-principal.md"), encoding: .utf8)
        var rows: [(HTTPMethod, String)] = []
        for line in text.split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 3, cells[3].hasPrefix("401 CA012") else { continue }
            let route = cells[1].components(separatedBy: " (")[0]
            let parts = route.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let path = parts[1].split(separator: "/", omittingEmptySubsequences: false)
                .map { $0.hasPrefix(":") ? "01a00000-0000-7000-8000-000000000000" : String($0) }.joined(separator: "/")
            for m in parts[0].split(separator: "/") {
                rows.append((HTTPMethod(rawValue: String(m)), path))
            }
        }
        return rows
    }

    @Test("every route the table answers 401 CA012 anonymously does, and another user reaches nothing of an account by its ids")
    func matrix() async throws {
        let rows = try Self.anonymousRows()
        #expect(rows.count >= 60, "the table's anonymous rows were not found: \(rows.count)")
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        let root = try StoreSigner().rootFile()
        try await withTestSuite(label: "cross_account", start: { s in
            // With an ops token, so the ops page answers a stranger 401 as the table says.
            try s.start("accounts", migrations: AccountsService.migrations, build: AccountsService.build)
            try s.start("alarms", migrations: AlarmsService.migrations, build: AlarmsService.build)
            try s.startGateway(extra: ["CHRONIR_OPS_TOKEN": "matrix-ops-token-0123456789"])
            try s.startInvitations()
            try s.startNotifications(push)
            try s.start("billing", migrations: BillingService.migrations, extra: ["CHRONIR_APPLE_ROOT_CA_FILE": root], build: BillingService.build)
        }) { s in
            var differences: [String] = []
            for (method, path) in rows {
                let r = try await s.request(method, path, json: method == .GET || method == .HEAD || method == .DELETE ? nil : [String: String]())
                if r.status != 401 || r.code != "CA012" { differences.append("\(method) \(path) anonymous: \(r.status) \(r.code ?? "") \(r.text.prefix(120))") }
            }

            let owner = try await s.signup("Owner")
            _ = try await s.setTier(owner, "premium")
            let invitee = try await s.signup("Invitee")
            let stranger = try await s.signup("Stranger")
            _ = try await s.setTier(stranger, "premium")
            // The owner's things: an alarm, a group, a calendar feed, a device, an invitation to
            // the invitee, and the invitee's inbox entry about it.
            let alarm = try #require(try await s.request(.POST, "/v1/alarms", token: owner.token,
                                                         json: ["title": "Mine", "schedule": scheduleJSON()]).json["id"]?.stringValue)
            let g = try #require(try await s.request(.POST, "/v1/groups", token: owner.token, json: ["name": "Home"]).json["id"]?.stringValue)
            let feed = try await s.request(.POST, "/v1/me/calendar-feeds", token: owner.token, json: ["scope": "me"])
            let feedId = try #require(feed.json["id"]?.stringValue, "\(feed.text)")
            let feedURL = try #require(feed.json["url"]?.stringValue)
            let feedPath = String(feedURL[feedURL.range(of: "/cal/")!.lowerBound...])
            #expect(try await s.request(.PUT, "/v1/me/devices/phone", token: owner.token, json: ["platform": "ios", "pushToken": "owner-token"]).status == 200)
            let code = try await s.invite("group", g, by: owner, to: invitee)
            #expect(await eventually(timeout: .seconds(10)) { await s.inboxCount(invitee, type: "invitation_received") ?? 0 >= 1 })
            let inbox = try await s.request(.GET, "/v1/me/notifications", token: invitee.token)
            let note = try #require(inbox.json["notifications"]?.arrayValue?.first?["id"], "\(inbox.text)")
            let noteId = note.stringValue ?? note.intValue.map(String.init) ?? "?"

            func expect(_ what: String, _ r: HTTPResult, _ status: Int, _ code: String?) {
                if r.status != status || (code != nil && r.code != code) {
                    differences.append("\(what) as another user: table \(status) \(code ?? ""), got \(r.status) \(r.code ?? "") \(r.text.prefix(160))")
                }
            }
            let t = stranger.token
            expect("GET /v1/alarms/:id", try await s.request(.GET, "/v1/alarms/\(alarm)", token: t), 404, "CA006")
            expect("POST /v1/invitations for another's alarm", try await s.request(.POST, "/v1/invitations", token: t,
                                                                                   json: ["type": "alarm", "referenceId": alarm]), 404, "CA006")
            expect("POST /v1/invitations for another's group", try await s.request(.POST, "/v1/invitations", token: t,
                                                                                   json: ["type": "group", "referenceId": g]), 404, "CA017")
            expect("DELETE /v1/me/calendar-feeds/:id", try await s.request(.DELETE, "/v1/me/calendar-feeds/\(feedId)", token: t), 404, "CA017")
            expect("POST /v1/me/calendar-feeds for another's group", try await s.request(.POST, "/v1/me/calendar-feeds", token: t,
                                                                                         json: ["scope": "group", "groupId": g]), 404, "CA017")
            let wrong = "/cal/" + String(repeating: "0", count: 32) + ".ics"
            expect("GET /cal/:file with a made-up token", try await s.request(.GET, wrong), 404, "CA017")
            expect("POST /v1/me/notifications/:id/ack", try await s.request(.POST, "/v1/me/notifications/\(noteId)/ack", token: t), 404, "CA017")
            expect("DELETE /v1/me/devices/:deviceId", try await s.request(.DELETE, "/v1/me/devices/phone", token: t), 404, "CA017")
            expect("GET /v1/invitations/:code (direct)", try await s.request(.GET, "/v1/invitations/\(code)", token: t), 404, "CA017")
            expect("POST /v1/invitations/:code/accept", try await s.request(.POST, "/v1/invitations/\(code)/accept", token: t), 403, "CA007")
            expect("POST /v1/invitations/:code/decline", try await s.request(.POST, "/v1/invitations/\(code)/decline", token: t), 403, "CA007")
            expect("DELETE /v1/invitations/:code", try await s.request(.DELETE, "/v1/invitations/\(code)", token: t), 404, "CA017")
            expect("POST /v1/auth/logout with another's refresh token", try await s.request(.POST, "/v1/auth/logout", token: t,
                                                                                          json: ["refreshToken": owner.refreshToken ?? ""]), 400, "CA016")
            expect("GET /v1/groups/:id", try await s.request(.GET, "/v1/groups/\(g)", token: t), 404, "CA017")
            let ownSessions = try await s.request(.GET, "/v1/me/sessions", token: owner.token)
            let ownerSession = try #require(ownSessions.json["sessions"]?.arrayValue?.first?["id"]?.stringValue, "\(ownSessions.text)")
            expect("DELETE /v1/me/sessions/:sessionId", try await s.request(.DELETE, "/v1/me/sessions/\(ownerSession)", token: t), 404, "CA017")
            let strangers = try await s.request(.GET, "/v1/me/sessions", token: t)
            if strangers.text.contains(ownerSession) { differences.append("GET /v1/me/sessions lists another account's session: \(strangers.text)") }
            let report = differences.joined(separator: "\n")
            #expect(differences.isEmpty, "\(differences.count) rows differ:\n\(report)")

            // Nothing of the owner's changed, and nothing of it is listed to the stranger.
            #expect(try await s.request(.GET, feedPath).status == 200, "the owner's feed still answers")
            let devices = try await s.request(.GET, "/v1/me/devices", token: owner.token)
            #expect(devices.text.contains("phone"), "\(devices.text)")
            #expect(try await s.request(.GET, "/v1/invitations/\(code)", token: invitee.token).json["status"]?.stringValue == "pending")
            #expect(try await s.request(.POST, "/v1/auth/refresh", json: ["refreshToken": owner.refreshToken ?? ""]).status == 200,
                    "the owner's session survived the stranger's logout and end-session")
            let listed = try await s.request(.GET, "/v1/invitations?role=inviter", token: t)
            #expect(!listed.text.contains(code), "\(listed.text)")
            let feeds = try await s.request(.GET, "/v1/me/calendar-feeds", token: t)
            #expect(!feeds.text.contains(feedId), "\(feeds.text)")
        }
    }
}
