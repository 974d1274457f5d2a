import BillingService
import Contracts
import Foundation
import Messaging
import NIOHTTP1
import Support
@testable import SuiteSupport
import Testing

/// The alarm rows of `docs/routes-by-principal.md` (issue 57, item 9), tried as each principal
/// would against the running suite: anonymous, another user, a member, a removed member and a
/// lapsed owner, each on the alarm that makes them that principal. Every row is one expectation
/// (status, and the code where the table names one); the test reports every row that differs.
@Suite("Alarm routes by principal")
struct AlarmRouteMatrixTests {
    /// Who asks, and about which alarm.
    struct Principal: Sendable {
        var name: String
        var token: String?
        var alarm: String
    }

    /// One row: a request, and for each principal the answer the table gives (status, code).
    struct Row: Sendable {
        var route: String
        var method: HTTPMethod
        var path: @Sendable (String) -> String
        var json: [String: any Sendable]?
        var bytes: Data?
        /// By principal name: (status, code or nil).
        var expected: [String: (Int, String?)]
    }

    static let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data(repeating: 9, count: 256)

    @Test("every alarm route answers each principal as the table says")
    func matrix() async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        let root = try StoreSigner().rootFile()
        try await withTestSuite(label: "route_matrix", start: { s in
            try s.startCore()
            try s.startInvitations()
            try s.startNotifications(push)
            try s.start("billing", migrations: BillingService.migrations, extra: ["CHRONIR_APPLE_ROOT_CA_FILE": root], build: BillingService.build)
        }) { s in
            let owner = try await s.signup("Owner")
            _ = try await s.setTier(owner, "premium")
            let member = try await s.signup("Member")
            let removed = try await s.signup("Removed")
            let stranger = try await s.signup("Stranger")
            let lapsed = try await s.signup("Lapsed")
            _ = try await s.setTier(lapsed, "premium")
            let lapsedMember = try await s.signup("LapsedMember")

            func alarm(_ u: TestUser, _ title: String, group: String? = nil) async throws -> String {
                var body: [String: Any] = ["title": title, "schedule": scheduleJSON("weekly", day: 1)]
                if let group { body["groupId"] = group }
                let r = try await s.request(.POST, "/v1/alarms", token: u.token, json: body)
                return try #require(r.json["id"]?.stringValue, "\(r.text)")
            }
            // A: shared with the member. B: the owner's group alarm, whose group the removed
            // member left. C: the lapsed owner's, shared with their member before the lapse.
            let a = try await alarm(owner, "Shared")
            try await s.share(a, owner: owner, with: [member])
            let g = try #require(try await s.request(.POST, "/v1/groups", token: owner.token, json: ["name": "Home"]).json["id"]?.stringValue)
            let link = try await s.request(.POST, "/v1/invitations", token: owner.token, json: ["type": "group", "referenceId": g])
            let code = try #require(link.json["id"]?.stringValue, "\(link.text)")
            #expect(try await s.request(.POST, "/v1/invitations/\(code)/accept", token: removed.token).status == 200)
            #expect(await eventually(timeout: .seconds(10)) {
                (try? await s.request(.POST, "/v1/alarms", token: owner.token, json: ["title": "probe", "schedule": scheduleJSON(), "groupId": g]))?.status == 201
            })
            let b = try await alarm(owner, "Group", group: g)
            #expect(await eventually(timeout: .seconds(10)) { (try? await s.request(.GET, "/v1/alarms/\(b)", token: removed.token))?.status == 200 })
            #expect(try await s.request(.DELETE, "/v1/groups/\(g)/members/\(removed.uid)", token: owner.token).status == 204)
            #expect(await eventually(timeout: .seconds(10)) { (try? await s.request(.GET, "/v1/alarms/\(b)", token: removed.token))?.status == 404 })
            let c = try await alarm(lapsed, "Lapsed")
            try await s.share(c, owner: lapsed, with: [lapsedMember])
            for (u, id) in [(owner, a), (owner, b), (lapsed, c)] {
                let put = try await s.request(.PUT, "/v1/alarms/\(id)/photo", token: u.token, bytes: Self.jpeg, headers: ["Content-Type": "image/jpeg"])
                #expect(put.status == 200, "\(put.text)")
            }
            // The lapse, as billing's expiry records it.
            _ = try await s.setTier(lapsed, "free")
            try await s.inDatabase("alarms") {
                _ = try await $0.query("UPDATE user_tiers SET lapsed_from = 'premium', lapsed_at = now() WHERE user_id = \(lapsed.uid)")
            }
            #expect(try await s.request(.GET, "/v1/alarms/\(c)", token: lapsedMember.token).status == 404, "suspended")

            let principals = [
                Principal(name: "anonymous", token: nil, alarm: a), Principal(name: "other", token: stranger.token, alarm: a),
                Principal(name: "member", token: member.token, alarm: a), Principal(name: "removed", token: removed.token, alarm: b),
                Principal(name: "lapsed", token: lapsed.token, alarm: c),
            ]
            func all(_ anonymous: (Int, String?), other: (Int, String?), member: (Int, String?), removed: (Int, String?),
                     lapsed: (Int, String?)) -> [String: (Int, String?)] {
                ["anonymous": anonymous, "other": other, "member": member, "removed": removed, "lapsed": lapsed]
            }
            let unauth = (401, "CA012" as String?)
            let hidden = (404, "CA006" as String?)
            // Reads first, then changes, then what takes access away.
            let rows: [Row] = [
                Row(route: "GET /v1/alarms/:id", method: .GET, path: { "/v1/alarms/\($0)" },
                    expected: all(unauth, other: hidden, member: (200, nil), removed: hidden, lapsed: (200, nil))),
                Row(route: "GET /v1/alarms/:id/completions", method: .GET, path: { "/v1/alarms/\($0)/completions" },
                    expected: all(unauth, other: hidden, member: (200, nil), removed: hidden, lapsed: (200, nil))),
                Row(route: "GET /v1/alarms/:id/completions.csv", method: .GET, path: { "/v1/alarms/\($0)/completions.csv" },
                    expected: all(unauth, other: hidden, member: (200, nil), removed: hidden, lapsed: (200, nil))),
                Row(route: "GET /v1/alarms/:id/snooze", method: .GET, path: { "/v1/alarms/\($0)/snooze" },
                    expected: all(unauth, other: hidden, member: (200, nil), removed: hidden, lapsed: (200, nil))),
                Row(route: "GET /v1/alarms/:id/calendar.ics", method: .GET, path: { "/v1/alarms/\($0)/calendar.ics" },
                    expected: all(unauth, other: hidden, member: (200, nil), removed: hidden, lapsed: (200, nil))),
                Row(route: "GET /v1/alarms/:id/photo", method: .GET, path: { "/v1/alarms/\($0)/photo" },
                    expected: all(unauth, other: hidden, member: (200, nil), removed: hidden, lapsed: (200, nil))),
                Row(route: "PATCH /v1/alarms/:id", method: .PATCH, path: { "/v1/alarms/\($0)" }, json: ["title": "Renamed"],
                    expected: all(unauth, other: hidden, member: (403, "CA007"), removed: hidden, lapsed: (200, nil))),
                Row(route: "PATCH /v1/alarms/:id (adding a member)", method: .PATCH, path: { "/v1/alarms/\($0)" },
                    json: ["sharedWith": [lapsedMember.uid]],
                    expected: all(unauth, other: hidden, member: (403, "CA007"), removed: hidden, lapsed: (403, "CA013"))),
                Row(route: "PATCH /v1/alarms/:id/completions/:completionId", method: .PATCH, path: { "/v1/alarms/\($0)/completions/x" },
                    json: ["note": "rewritten"],
                    expected: all(unauth, other: hidden, member: (403, "CA007"), removed: hidden, lapsed: (403, "CA007"))),
                Row(route: "PUT /v1/alarms/:id/snooze-policy", method: .PUT, path: { "/v1/alarms/\($0)/snooze-policy" },
                    json: ["enabled": true, "freeSnoozes": 1],
                    expected: all(unauth, other: hidden, member: (403, "CA007"), removed: hidden, lapsed: (200, nil))),
                Row(route: "PUT /v1/alarms/:id/photo", method: .PUT, path: { "/v1/alarms/\($0)/photo" }, bytes: Self.jpeg,
                    expected: all(unauth, other: hidden, member: (403, "CA007"), removed: hidden, lapsed: (403, "CA013"))),
                Row(route: "POST /v1/alarms/:id/completions", method: .POST, path: { "/v1/alarms/\($0)/completions" },
                    json: ["status": "completed"],
                    expected: all(unauth, other: hidden, member: (201, nil), removed: hidden, lapsed: (201, nil))),
                Row(route: "DELETE /v1/alarms/:id/photo", method: .DELETE, path: { "/v1/alarms/\($0)/photo" },
                    expected: all(unauth, other: hidden, member: (403, "CA007"), removed: hidden, lapsed: (200, nil))),
                Row(route: "DELETE /v1/alarms/:id", method: .DELETE, path: { "/v1/alarms/\($0)" },
                    expected: ["anonymous": unauth, "other": hidden, "member": (403, "CA007"), "removed": hidden]),
                Row(route: "DELETE /v1/alarms/:id/members/me", method: .DELETE, path: { "/v1/alarms/\($0)/members/me" },
                    expected: all(unauth, other: hidden, member: (204, nil), removed: hidden, lapsed: (400, "CA016"))),
                Row(route: "DELETE /v1/alarms/:id (the owner)", method: .DELETE, path: { "/v1/alarms/\($0)" },
                    expected: ["lapsed": (204, nil)]),
            ]
            var differences: [String] = []
            var asked = 0
            for row in rows {
                for p in principals {
                    guard let (status, code) = row.expected[p.name] else { continue }
                    var headers: [String: String] = [:]
                    if row.bytes != nil { headers["Content-Type"] = "image/jpeg" }
                    asked += 1
                    let r = try await s.request(row.method, row.path(p.alarm), token: p.token, json: row.json, bytes: row.bytes, headers: headers)
                    if r.status != status || (code != nil && r.code != code) {
                        differences.append("\(row.route) as \(p.name): table \(status) \(code ?? ""), got \(r.status) \(r.code ?? "") \(r.text.prefix(160))")
                    }
                }
            }
            #expect(asked == 75, "every row and principal asked")
            let report = differences.joined(separator: "\n")
            #expect(differences.isEmpty, "\(differences.count) rows differ:\n\(report)")

            // The list rows: the other user's list holds none of A, the removed member's none of B.
            func listed(_ u: TestUser) async throws -> Set<String> {
                let r = try await s.request(.GET, "/v1/alarms", token: u.token)
                return Set((r.json["alarms"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue })
            }
            #expect(try await listed(stranger).isDisjoint(with: [a, b, c]))
            #expect(try await !listed(removed).contains(b))
            #expect(try await !listed(lapsedMember).contains(c), "suspended sharing leaves the member's list")
            #expect(try await listed(owner).isSuperset(of: [a, b]))
        }
    }
}
