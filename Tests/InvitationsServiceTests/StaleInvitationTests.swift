import Foundation
import PostgresNIO
import Support
@testable import SuiteSupport
import Testing

/// Issue 57: invitations that outlive their maker's role or plan, tried as a stranger would.
extension GroupsInvitationsTests {
    @Test("an open group link made by an admin who was then removed is refused at accept (403 CA007); an alarm invitation made while the owner had Premium is refused once the plan lapsed (CA002, read from invitations' own copy of the accounts stream) and taken again after it is back; an accept past the 20-member cap of an alarm is refused (CA003) and the invitation stays pending")
    func inviterRecheckedAtAccept() async throws {
        try await withSuite { s in
            let owner = try await premium(s, "Owner")
            let admin = try await premium(s, "Admin")
            let g = try await group(s, owner)
            try await join(s, g, owner: owner, admin, admin: true)
            let link = try await s.request(.POST, "/v1/invitations", token: admin.token, json: ["type": "group", "referenceId": g])
            #expect(link.status == 201, "\(link.text)")
            let code = try #require(link.json["id"]?.stringValue)
            #expect(try await s.request(.DELETE, "/v1/groups/\(g)/members/\(admin.uid)", token: owner.token).status == 204)
            let stranger = try await s.signup("Stranger")
            let refused = try await s.request(.POST, "/v1/invitations/\(code)/accept", token: stranger.token)
            #expect(refused.status == 403 && refused.code == "CA007", "a removed admin's link still lets strangers in: \(refused.status) \(refused.text)")
            let members = try await s.request(.GET, "/v1/groups/\(g)", token: owner.token)
            #expect(!members.text.contains(stranger.uid), "\(members.text)")

            let alarm = try await s.request(.POST, "/v1/alarms", token: owner.token, json: ["title": "Rent", "schedule": scheduleJSON()])
            #expect(alarm.status == 201, "\(alarm.text)")
            let alarmId = try #require(alarm.json["id"]?.stringValue)
            let partner = try await s.signup("Partner")
            let alarmCode = try await s.invite("alarm", alarmId, by: owner, to: partner)
            _ = try await s.setTier(owner, "free")
            // Invitations reads the plan from its copy of the accounts stream (no call at accept).
            func tierSeen(_ tier: String) async -> Bool {
                await eventually(timeout: .seconds(15)) {
                    let t = try? await s.inDatabase("invitations") {
                        try await $0.query("SELECT tier FROM users WHERE uid = \(owner.uid)").first(String.self)
                    }
                    return t == tier
                }
            }
            #expect(await tierSeen("free"))
            let lapsed = try await s.request(.POST, "/v1/invitations/\(alarmCode)/accept", token: partner.token)
            #expect(lapsed.code == "CA002", "an invitation of a lapsed owner still shares the alarm: \(lapsed.status) \(lapsed.text)")
            _ = try await s.setTier(owner, "premium")
            #expect(await tierSeen("premium"))
            let back = try await s.request(.POST, "/v1/invitations/\(alarmCode)/accept", token: partner.token)
            #expect(back.status == 200, "\(back.text)")

            // The share cap at accept: invitations counts the alarm's members from the alarms
            // stream (one now), and refuses an accept once the alarm holds 20 (CA003).
            func shares() async -> Int? {
                try? await s.inDatabase("invitations") {
                    try await $0.query("SELECT shared FROM alarm_shares WHERE alarm_id = \(alarmId)").first(Int32.self).map(Int.init)
                }
            }
            let counted = await eventually(timeout: .seconds(15)) { await shares() == 1 }
            let count = await shares()
            #expect(counted, "invitations counted \(String(describing: count)) people on the alarm, not 1")
            let late = try await s.signup("Late")
            let lateInvite = try await s.request(.POST, "/v1/invitations", token: owner.token,
                                                 json: ["type": "alarm", "referenceId": alarmId, "inviteeUserId": late.uid])
            let lateCode = try #require(lateInvite.json["id"]?.stringValue, "\(lateInvite.text)")
            _ = try await s.inDatabase("invitations") {
                try await $0.query("UPDATE alarm_shares SET shared = 20 WHERE alarm_id = \(alarmId)")
            }
            let full = try await s.request(.POST, "/v1/invitations/\(lateCode)/accept", token: late.token)
            #expect(full.code == "CA003" && full.status == 409, "an accept past the cap of 20: \(full.status) \(full.text)")
            let pending = try await s.request(.GET, "/v1/invitations/\(lateCode)", token: owner.token)
            #expect(pending.json["status"]?.stringValue == "pending", "the refused accept spent the invitation: \(pending.text)")
        }
    }
}
