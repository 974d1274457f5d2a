import AccountsService
import AlarmsService
import BillingService
import Contracts
import Foundation
import Messaging
import Support
@testable import SuiteSupport
import Testing

/// What a lapsed plan leaves behind, tried as the people involved would (issue 57, findings 5,
/// 6, 7, 9 and 11 of `docs/routes-by-principal.md`): sharing suspended by a downgrade can still
/// be left and edited, an accept that races a lapse waits with the suspended sharing, a group
/// owner's lapse suspends what their plan covered, a Free export holds no one else's history, and
/// a lapsed owner's photo upload says the subscription expired.
@Suite("Suspended sharing and lapsed plans")
struct SuspendedSharingTests {
    static func strings(_ v: JSONValue?) -> [String] { v?.arrayValue?.compactMap(\.stringValue) ?? [] }

    /// Accounts, alarms, invitations and the gateway; with `everything` notifications and billing
    /// too (the data export asks every service).
    static func suite(_ label: String, everything: Bool = false, _ body: @escaping @Sendable (TestSuite) async throws -> Void) async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        let signer = try StoreSigner()
        let root = try signer.rootFile()
        try await withTestSuite(label: label, start: { s in
            try s.startCore()
            try s.startInvitations()
            if everything {
                try s.startNotifications(push)
                try s.start("billing", migrations: BillingService.migrations, extra: ["CHRONIR_APPLE_ROOT_CA_FILE": root], build: BillingService.build)
            }
        }, body)
    }

    /// The members `alarm`'s suspended sharing keeps (nil: none is kept).
    static func kept(_ s: TestSuite, _ alarm: String) async throws -> [String]? {
        try await s.inDatabase("alarms") {
            try await $0.query("SELECT shared_with FROM suspended_shares WHERE alarm_id = \(alarm)").first([String].self)
        }
    }

    @Test("while sharing is suspended a member can leave and the owner can take one off; neither comes back with Premium")
    func leaveWhileSuspended() async throws {
        try await Self.suite("suspended_leave") { s in
            let owner = try await s.signup("Owner")
            _ = try await s.setTier(owner, "premium")
            let leaver = try await s.signup("Leaver")
            let dropped = try await s.signup("Dropped")
            let stays = try await s.signup("Stays")
            let stranger = try await s.signup("Stranger")
            let r = try await s.request(.POST, "/v1/alarms", token: owner.token, json: ["title": "Boiler", "schedule": scheduleJSON()])
            let id = try #require(r.json["id"]?.stringValue, "\(r.text)")
            try await s.share(id, owner: owner, with: [leaver, dropped, stays])
            _ = try await s.setTier(owner, "free")
            #expect(try await s.request(.GET, "/v1/alarms/\(id)", token: leaver.token).status == 404)

            // Someone who was never on it learns nothing, and cannot take anyone off.
            #expect(try await s.request(.DELETE, "/v1/alarms/\(id)/members/me", token: stranger.token).status == 404)
            #expect(try await s.request(.DELETE, "/v1/alarms/\(id)/members/\(stays.uid)", token: stranger.token).status == 404)
            // A kept member cannot take another off either.
            #expect(try await s.request(.DELETE, "/v1/alarms/\(id)/members/\(stays.uid)", token: leaver.token).status == 404)
            let left = try await s.request(.DELETE, "/v1/alarms/\(id)/members/me", token: leaver.token)
            #expect(left.status == 204, "a member can leave a suspended alarm: \(left.text)")
            let removed = try await s.request(.DELETE, "/v1/alarms/\(id)/members/\(dropped.uid)", token: owner.token)
            #expect(removed.status == 204, "the owner can take a member off a suspended alarm: \(removed.text)")
            #expect(Set(try await Self.kept(s, id) ?? []) == [stays.uid])

            _ = try await s.setTier(owner, "premium")
            let back = try await s.request(.GET, "/v1/alarms/\(id)", token: owner.token)
            #expect(Self.strings(back.json["sharedWith"]) == [stays.uid], "only who stayed comes back: \(back.text)")
            #expect(try await s.request(.GET, "/v1/alarms/\(id)", token: leaver.token).status == 404)
            #expect(try await s.request(.GET, "/v1/alarms/\(id)", token: dropped.token).status == 404)
            #expect(try await s.request(.GET, "/v1/alarms/\(id)", token: stays.token).status == 200)
        }
    }

    @Test("an invitation accepted after the owner's Premium ended (invitations not yet told) shares nothing until Premium returns")
    func acceptRacingALapse() async throws {
        try await Self.suite("suspended_accept") { s in
            let owner = try await s.signup("Owner")
            _ = try await s.setTier(owner, "premium")
            let invitee = try await s.signup("Invitee")
            let r = try await s.request(.POST, "/v1/alarms", token: owner.token, json: ["title": "Filter", "schedule": scheduleJSON()])
            let id = try #require(r.json["id"]?.stringValue, "\(r.text)")
            let code = try await s.invite("alarm", id, by: owner, to: invitee)
            // Alarms hears of the lapse first (billing → alarms is one hop; billing → accounts →
            // invitations two): invitations still takes the accept.
            _ = try await s.rpc(.alarms, AlarmsMethods.SetTier.self, .init(userId: owner.uid, tier: "free"))
            let accepted = try await s.request(.POST, "/v1/invitations/\(code)/accept", token: invitee.token)
            #expect(accepted.status == 200, "\(accepted.text)")
            #expect(await eventually(timeout: .seconds(10)) { (try? await Self.kept(s, id)) == [invitee.uid] },
                    "the accept is kept with the suspended sharing")
            let a = try await s.request(.GET, "/v1/alarms/\(id)", token: owner.token)
            #expect(Self.strings(a.json["sharedWith"]).isEmpty, "a Free owner's alarm gained a member: \(a.text)")
            #expect(try await s.request(.GET, "/v1/alarms/\(id)", token: invitee.token).status == 404)

            _ = try await s.setTier(owner, "premium")
            #expect(try await s.request(.GET, "/v1/alarms/\(id)", token: invitee.token).status == 200, "the accepted member joins with Premium")
        }
    }

    @Test("a group owner's lapse suspends the alarms their plan covered for Free members; Premium again gives them back")
    func groupOwnerLapse() async throws {
        try await Self.suite("suspended_group") { s in
            let owner = try await s.signup("Owner")
            _ = try await s.setTier(owner, "premium")
            let maker = try await s.signup("Maker")
            let neighbour = try await s.signup("Neighbour")
            let paying = try await s.signup("Paying")
            _ = try await s.setTier(paying, "premium")
            let group = try await s.request(.POST, "/v1/groups", token: owner.token, json: ["name": "Street", "iconName": "house"])
            let g = try #require(group.json["id"]?.stringValue, "\(group.text)")
            #expect(try await s.request(.PATCH, "/v1/groups/\(g)", token: owner.token, json: ["alarmEditors": "everyone"]).status == 200)
            for u in [maker, neighbour, paying] {
                // A link is taken once: one each.
                let link = try await s.request(.POST, "/v1/invitations", token: owner.token, json: ["type": "group", "referenceId": g])
                let code = try #require(link.json["id"]?.stringValue, "\(link.text)")
                let joined = try await s.request(.POST, "/v1/invitations/\(code)/accept", token: u.token)
                #expect(joined.status == 200, "\(joined.text)")
            }
            func groupAlarm(_ u: TestUser, _ title: String) async throws -> String {
                var made: HTTPResult?
                #expect(await eventually(timeout: .seconds(10)) {
                    made = try? await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": title, "schedule": scheduleJSON(), "groupId": g])
                    return made?.status == 201
                }, "\(made?.text ?? "")")
                return try #require(made?.json["id"]?.stringValue)
            }
            let covered = try await groupAlarm(maker, "Bins")
            let own = try await groupAlarm(paying, "Hedge")
            #expect(Self.strings(try await s.request(.GET, "/v1/alarms/\(covered)", token: maker.token).json["sharedWith"]).contains(neighbour.uid))

            _ = try await s.setTier(owner, "free")
            let suspended = try await s.request(.GET, "/v1/alarms/\(covered)", token: maker.token)
            #expect(Self.strings(suspended.json["sharedWith"]).isEmpty && suspended.json["groupId"] == .null,
                    "the plan that covered the group ended: \(suspended.text)")
            #expect(try await s.request(.GET, "/v1/alarms/\(covered)", token: neighbour.token).status == 404)
            // A member on Premium pays for their own alarm's sharing: it stays.
            #expect(try await s.request(.GET, "/v1/alarms/\(own)", token: neighbour.token).status == 200)

            _ = try await s.setTier(owner, "premium")
            let back = try await s.request(.GET, "/v1/alarms/\(covered)", token: maker.token)
            #expect(back.json["groupId"]?.stringValue == g, "\(back.text)")
            #expect(Set(Self.strings(back.json["sharedWith"])).isSuperset(of: [neighbour.uid, owner.uid]), "\(back.text)")
            #expect(try await s.request(.GET, "/v1/alarms/\(covered)", token: neighbour.token).status == 200)
        }
    }

    @Test("a Free owner's export holds their own completions and no one else's (the history Free locks); Plus shows them")
    func exportFollowsTheHistoryLock() async throws {
        try await Self.suite("suspended_export", everything: true) { s in
            let owner = try await s.signup("Owner")
            _ = try await s.setTier(owner, "premium")
            let member = try await s.signup("Member")
            let r = try await s.request(.POST, "/v1/alarms", token: owner.token, json: ["title": "Meds", "schedule": scheduleJSON("weekly", day: 1)])
            let id = try #require(r.json["id"]?.stringValue, "\(r.text)")
            try await s.share(id, owner: owner, with: [member])
            #expect(try await s.request(.POST, "/v1/alarms/\(id)/completions", token: member.token,
                                        json: ["status": "completed", "note": "member's private note"]).status == 201)
            #expect(try await s.request(.POST, "/v1/alarms/\(id)/completions", token: owner.token, json: ["status": "completed"]).status == 201)

            func completions() async throws -> [[String: Any]] {
                let export = try await s.request(.GET, "/v1/me/export", token: owner.token)
                let doc = try #require(try JSONSerialization.jsonObject(with: export.body) as? [String: Any], "\(export.text.prefix(300))")
                return doc["completions"] as? [[String: Any]] ?? []
            }
            _ = try await s.setTier(owner, "free")
            let free = try await completions()
            #expect(free.compactMap { $0["user_id"] as? String } == [owner.uid], "\(free)")
            _ = try await s.setTier(owner, "plus")
            let plus = try await completions()
            #expect(Set(plus.compactMap { $0["user_id"] as? String }) == [owner.uid, member.uid], "\(plus)")
            // The member's own export has their completion whatever the owner's plan.
            let mine = try await s.request(.GET, "/v1/me/export", token: member.token)
            #expect(mine.text.contains("member's private note"), "\(mine.text.prefix(300))")
        }
    }

    @Test("a lapsed owner's photo upload is refused as an expired subscription (CA013), not as an offer to upgrade")
    func lapsedPhotoUpload() async throws {
        try await Self.suite("suspended_photo") { s in
            let owner = try await s.signup("Owner")
            _ = try await s.setTier(owner, "plus")
            let r = try await s.request(.POST, "/v1/alarms", token: owner.token, json: ["title": "Plant", "schedule": scheduleJSON()])
            let id = try #require(r.json["id"]?.stringValue, "\(r.text)")
            let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data(repeating: 7, count: 64)
            #expect(try await s.request(.PUT, "/v1/alarms/\(id)/photo", token: owner.token, bytes: jpeg, headers: ["Content-Type": "image/jpeg"]).status == 200)
            _ = try await s.setTier(owner, "free")
            // As billing's expiry records it (`TierStanding.after`): the Plus it had.
            try await s.inDatabase("alarms") {
                _ = try await $0.query("UPDATE user_tiers SET lapsed_from = 'plus', lapsed_at = now() WHERE user_id = \(owner.uid)")
            }
            let lapsed = try await s.request(.PUT, "/v1/alarms/\(id)/photo", token: owner.token, bytes: jpeg, headers: ["Content-Type": "image/jpeg"])
            #expect(lapsed.status == 403 && lapsed.code == "CA013", "\(lapsed.text)")
            #expect(lapsed.json["message"]?.stringValue?.contains("Plus subscription expired") == true, "\(lapsed.text)")
        }
    }
}
