import Contracts
import Foundation
import Messaging
import SchedulerService
import Support
@testable import SuiteSupport
import Testing

/// A group's rules (issue 41 item 5; US-10.2, US-10.3, US-10.4): who creates and edits its
/// alarms, its pending window, each member's completion pushes, assigned alarms, and texts that
/// name the group and the person. Real services through the gateway.
@Suite("Group settings")
struct GroupSettingsTests {
    func withSuite(_ body: (TestSuite) async throws -> Void) async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        try await withTestSuite(label: "group_rules", start: { s in
            try s.startCore()
            try s.start("scheduler", migrations: SchedulerService.migrations, extra: ["CHRONIR_SCHEDULER_PARTITIONS": "16"],
                        build: SchedulerService.build)
            try s.startNotifications(push)
            try s.startInvitations()
        }, body)
    }

    /// The inbox entries of `u` of `type`, once `count` of them are there.
    func inbox(_ s: TestSuite, _ u: TestUser, type: String, count: Int) async -> [JSONValue] {
        var found: [JSONValue] = []
        _ = await eventually(timeout: .seconds(15)) {
            let r = try? await s.request(.GET, "/v1/me/notifications", token: u.token)
            found = (r?.json["notifications"]?.arrayValue ?? []).filter { $0["type"]?.stringValue == type }
            return found.count >= count
        }
        return found
    }

    @Test("who edits a group's alarms, its pending window, completion pushes per member, assigned fires and texts naming the group")
    func rules() async throws {
        try await withSuite { s in
            let owner = try await s.signup("Olu")
            _ = try await s.setTier(owner, "premium")
            let admin = try await s.signup("Ada")
            let member = try await s.signup("Mo")
            let created = try await s.request(.POST, "/v1/groups", token: owner.token, json: ["name": "Flat 3"])
            let g = try #require(created.json["id"]?.stringValue, "\(created.text)")
            #expect(created.json["settings"]?["alarmEditors"]?.stringValue == "admins")
            for u in [admin, member] {
                let link = try await s.request(.POST, "/v1/invitations", token: owner.token, json: ["type": "group", "referenceId": g])
                let code = try #require(link.json["id"]?.stringValue)
                #expect(try await s.request(.POST, "/v1/invitations/\(code)/accept", token: u.token).status == 200)
            }
            #expect(try await s.request(.PATCH, "/v1/groups/\(g)/members/\(admin.uid)", token: owner.token, json: ["role": "admin"]).status == 200)
            func groupAlarm(_ u: TestUser, _ title: String, _ extra: [String: Any] = [:]) async throws -> HTTPResult {
                var body: [String: Any] = ["title": title, "groupId": g, "schedule": scheduleJSON("annual", day: 1)]
                body.merge(extra) { $1 }
                return try await s.request(.POST, "/v1/alarms", token: u.token, json: body)
            }

            // Default: the owner and admins create; members do not.
            #expect(await eventually(timeout: .seconds(15)) { (try? await groupAlarm(admin, "Admin's").status) == 201 })
            #expect(try await groupAlarm(member, "Member's").code == "CA007")
            // Only the owner decides who edits; then every member may.
            #expect(try await s.request(.PATCH, "/v1/groups/\(g)", token: admin.token, json: ["alarmEditors": "everyone"]).code == "CA007")
            #expect(try await s.request(.PATCH, "/v1/groups/\(g)", token: owner.token, json: ["alarmEditors": "anyone"]).code == "CA016")
            let everyone = try await s.request(.PATCH, "/v1/groups/\(g)", token: owner.token, json: ["alarmEditors": "everyone"])
            #expect(everyone.json["settings"]?["alarmEditors"]?.stringValue == "everyone", "\(everyone.text)")
            #expect(await eventually(timeout: .seconds(15)) { (try? await groupAlarm(member, "Member's").status) == 201 })
            let ownersAlarm = try #require(try await groupAlarm(owner, "Bins").json["id"]?.stringValue)
            #expect(try await s.request(.PATCH, "/v1/alarms/\(ownersAlarm)", token: member.token, json: ["title": "Bins out"]).status == 200)
            // The owner alone: an admin no longer creates.
            #expect(try await s.request(.PATCH, "/v1/groups/\(g)", token: owner.token, json: ["alarmEditors": "owner"]).status == 200)
            #expect(await eventually(timeout: .seconds(15)) { (try? await groupAlarm(admin, "Admin's again").code) == "CA007" })
            #expect(try await s.request(.PATCH, "/v1/alarms/\(ownersAlarm)", token: admin.token, json: ["title": "x"]).code == "CA007")

            // The pending window: a group alarm's missed check is 30 minutes after its fire.
            #expect(try await s.request(.PATCH, "/v1/groups/\(g)", token: owner.token, json: ["pendingWindowMinutes": 5]).code == "CA016")
            #expect(try await s.request(.PATCH, "/v1/groups/\(g)", token: owner.token, json: ["pendingWindowMinutes": 30]).status == 200)
            var windowed = ""
            #expect(await eventually(timeout: .seconds(15)) {
                // The setting reaches alarms through the accounts stream: new alarms carry it once it has.
                guard let id = try? await groupAlarm(owner, "Windowed").json["id"]?.stringValue else { return false }
                windowed = id
                try? await s.awaitFireTimer(id)
                let gap = try? await s.inDatabase("scheduler") {
                    try await $0.query("""
                        SELECT EXTRACT(EPOCH FROM due_at - occurrence_at)::int FROM timers WHERE alarm_id = \(id) AND kind = 'missed'
                        """).first(Int.self)
                }
                return gap == 1800
            }, "the missed check of \(windowed) is not 30 min after its fire")

            // Completion pushes per member: Mo turns them off (for himself only).
            #expect(try await s.request(.PATCH, "/v1/groups/\(g)/members/\(admin.uid)", token: member.token,
                                        json: ["completionPushes": false]).code == "CA007")
            let off = try await s.request(.PATCH, "/v1/groups/\(g)/members/\(member.uid)", token: member.token, json: ["completionPushes": false])
            #expect(off.status == 200 && off.json["completionPushes"] == .bool(false), "\(off.text)")
            try await Task.sleep(for: .seconds(1))   // notifications hears of it on the accounts stream
            #expect(try await s.request(.POST, "/v1/alarms/\(ownersAlarm)/completions", token: admin.token, json: ["status": "completed"]).status == 201)
            let told = await inbox(s, owner, type: "alarm_completed", count: 1)
            #expect(told.first?["body"]?.stringValue == "Marked complete by Ada in Flat 3", "\(told)")
            try await Task.sleep(for: .seconds(1))
            #expect(await inbox(s, member, type: "alarm_completed", count: 0).isEmpty, "Mo turned completion pushes off")

            // An assigned alarm rings for its assignee; the others are told who it rings for.
            let assigned = try #require(try await groupAlarm(owner, "Take out bins", ["assignedTo": member.uid]).json["id"]?.stringValue)
            try await s.fireAgain(assigned)
            let ringing = await inbox(s, member, type: "alarm_fired", count: 1)
            #expect(ringing.first?["body"]?.stringValue == "Assigned to you in Flat 3", "\(ringing)")
            let others = await inbox(s, admin, type: "alarm_fired", count: 1)
            #expect(others.first?["body"]?.stringValue == "Ringing for Mo in Flat 3", "\(others)")
            #expect(others.first?["data"]?["assignedTo"]?.stringValue == member.uid)
            // An unassigned group alarm names the group.
            try await s.fireAgain(ownersAlarm)
            let shared = await inbox(s, admin, type: "alarm_fired", count: 2)
            #expect(shared.contains { $0["body"]?.stringValue == "Shared alarm from Flat 3" }, "\(shared)")

            let types = try await s.checkPublishedEvents(["accounts", "alarms"])
            #expect(types.contains("accounts.group-upserted"), "\(types)")
        }
    }
}
