import Contracts
import Foundation
import InvitationsService
import Messaging
import Support
import Synchronization
@testable import SuiteSupport
import Testing

/// Groups (accounts), invitations and sharing through the gateway.
@Suite("Groups and invitations")
struct GroupsInvitationsTests {
    func withSuite(_ extra: [String: String] = ["CHRONIR_INVITATIONS_PER_HOUR": "1000"], _ body: (TestSuite) async throws -> Void) async throws {
        try await withTestSuite(label: "groups", start: { s in
            try s.startCore()
            try s.start("invitations", migrations: InvitationsService.migrations, extra: extra, build: InvitationsService.build)
        }, body)
    }

    func premium(_ s: TestSuite, _ name: String) async throws -> TestUser {
        let u = try await s.signup(name)
        _ = try await s.setTier(u, "premium")
        return u
    }

    func group(_ s: TestSuite, _ owner: TestUser, name: String = "Household") async throws -> String {
        let r = try await s.request(.POST, "/v1/groups", token: owner.token, json: ["name": name, "iconName": "house"])
        #expect(r.status == 201, "\(r.text)")
        return try #require(r.json["id"]?.stringValue)
    }

    /// Invites (link) and accepts: `user` joins the group; optionally promoted to admin.
    func join(_ s: TestSuite, _ group: String, owner: TestUser, _ user: TestUser, admin: Bool = false) async throws {
        let inv = try await s.request(.POST, "/v1/invitations", token: owner.token, json: ["type": "group", "referenceId": group])
        #expect(inv.status == 201, "\(inv.text)")
        let code = try #require(inv.json["id"]?.stringValue)
        let ok = try await s.request(.POST, "/v1/invitations/\(code)/accept", token: user.token)
        #expect(ok.status == 200, "\(ok.text)")
        if admin {
            let r = try await s.request(.PATCH, "/v1/groups/\(group)/members/\(user.uid)", token: owner.token, json: ["role": "admin"])
            #expect(r.status == 200, "\(r.text)")
        }
    }

    @Test("group lifecycle: Premium creates, invitees join, roles change, ownership transfers, members leave")
    func lifecycle() async throws {
        try await withSuite { s in
            let owner = try await premium(s, "Owner")
            let free = try await s.signup("Free")
            let refused = try await s.request(.POST, "/v1/groups", token: free.token, json: ["name": "Nope"])
            #expect(refused.status == 403)
            #expect(refused.code == "CA002")
            #expect(try await s.request(.POST, "/v1/groups", token: owner.token, json: ["name": ""]).status == 400)
            let g = try await group(s, owner)

            // A direct invitation to someone's email: only they can answer it.
            let partner = try await s.signup("Partner")
            let stranger = try await s.signup("Stranger")
            let direct = try await s.request(.POST, "/v1/invitations", token: owner.token,
                                             json: ["type": "group", "referenceId": g, "inviteeEmail": partner.email])
            #expect(direct.status == 201, "\(direct.text)")
            let code = try #require(direct.json["id"]?.stringValue)
            #expect(code.count >= 22, "the code must carry at least 128 bits")
            #expect(direct.json["deepLink"]?.stringValue == "https://chronir.app/invite/\(code)")
            #expect(direct.json["expiresAt"]?.stringValue.flatMap(ISOTime.parse).map { abs($0.timeIntervalSinceNow - 7 * 86_400) < 60 } == true)
            let pending = try await s.request(.GET, "/v1/invitations?role=invitee", token: partner.token)
            #expect(pending.json["invitations"]?.arrayValue?.map { $0["id"]?.stringValue } == [code])
            #expect(try await s.request(.POST, "/v1/invitations/\(code)/accept", token: stranger.token).status == 403)
            let accepted = try await s.request(.POST, "/v1/invitations/\(code)/accept", token: partner.token)
            #expect(accepted.status == 200, "\(accepted.text)")
            #expect(accepted.json["status"]?.stringValue == "accepted")
            let twice = try await s.request(.POST, "/v1/invitations/\(code)/accept", token: partner.token)
            #expect(twice.status == 409)
            #expect(twice.code == "CA005")

            let members = try await s.request(.GET, "/v1/groups/\(g)/members", token: partner.token)
            #expect(members.json["members"]?.arrayValue?.map { $0["role"]?.stringValue ?? "" } == ["owner", "member"])
            let mine = try await s.request(.GET, "/v1/groups", token: partner.token)
            #expect(mine.json["groups"]?.arrayValue?.first?["memberCount"]?.intValue == 2)

            // Roles: only admin|member; the owner's role moves by transfer only.
            #expect(try await s.request(.PATCH, "/v1/groups/\(g)/members/\(partner.uid)", token: owner.token, json: ["role": "owner"]).status == 400)
            #expect(try await s.request(.PATCH, "/v1/groups/\(g)/members/\(partner.uid)", token: owner.token, json: ["role": "admin"]).status == 200)
            let renamed = try await s.request(.PATCH, "/v1/groups/\(g)", token: partner.token, json: ["name": "Home", "description": "chores"])
            #expect(renamed.json["name"]?.stringValue == "Home")
            #expect(try await s.request(.PATCH, "/v1/groups/\(g)", token: owner.token, json: ["ownerId": partner.uid]).status == 400)

            // The owner cannot leave; transfers first, then leaves.
            #expect(try await s.request(.DELETE, "/v1/groups/\(g)/members/\(owner.uid)", token: owner.token).status == 400)
            let moved = try await s.request(.POST, "/v1/groups/\(g)/transfer", token: owner.token, json: ["uid": partner.uid])
            #expect(moved.status == 200, "\(moved.text)")
            #expect(moved.json["ownerId"]?.stringValue == partner.uid)
            #expect(try await s.request(.DELETE, "/v1/groups/\(g)/members/\(owner.uid)", token: owner.token).status == 204)
            #expect(try await s.request(.GET, "/v1/groups/\(g)", token: owner.token).status == 404)
            #expect(try await s.request(.DELETE, "/v1/groups/\(g)", token: partner.token).status == 204)
            #expect(try await s.request(.GET, "/v1/groups/\(g)", token: partner.token).status == 404)
            // A direct invitation can be declined by its invitee; then it cannot be accepted.
            let alarm = try await s.request(.POST, "/v1/alarms", token: owner.token, json: ["title": "Water", "schedule": scheduleJSON()])
            let declinable = try await s.request(.POST, "/v1/invitations", token: owner.token,
                                                 json: ["type": "alarm", "referenceId": alarm.json["id"]?.stringValue ?? "", "inviteeEmail": stranger.email])
            let dc = try #require(declinable.json["id"]?.stringValue, "\(declinable.text)")
            #expect(try await s.request(.POST, "/v1/invitations/\(dc)/decline", token: partner.token).status == 403)
            #expect(try await s.request(.POST, "/v1/invitations/\(dc)/decline", token: stranger.token).json["status"]?.stringValue == "declined")
            #expect(try await s.request(.POST, "/v1/invitations/\(dc)/accept", token: stranger.token).code == "CA028")

            // Every event on the way matches its schema in proto/events.
            let types = try await s.checkPublishedEvents(["accounts", "invitations"])
            #expect(types.isSuperset(of: ["accounts.group-upserted", "accounts.group-deleted", "invitations.invitation-created",
                                          "invitations.invitation-accepted"]), "\(types)")
        }
    }

    @Test("authorization matrix of groups: owner, admin, member, non-member, anonymous × every operation")
    func matrix() async throws {
        try await withSuite { s in
            let owner = try await premium(s, "Owner")
            let admin = try await s.signup("Admin")
            let member = try await s.signup("Member")
            let outsider = try await s.signup("Outsider")
            let target = try await s.signup("Target")
            enum Who: String, CaseIterable { case owner, admin, member, nonMember, anonymous }
            func token(_ w: Who) -> String? {
                switch w {
                case .owner: owner.token
                case .admin: admin.token
                case .member: member.token
                case .nonMember: outsider.token
                case .anonymous: nil
                }
            }
            func setup() async throws -> String {
                let g = try await group(s, owner)
                try await join(s, g, owner: owner, admin, admin: true)
                try await join(s, g, owner: owner, member)
                try await join(s, g, owner: owner, target)
                return g
            }
            // Everyone is Premium, so the role alone decides (a Free caller gets CA002 before any role check).
            for u in [admin, member, outsider] { _ = try await s.setTier(u, "premium") }
            typealias Op = (method: String, path: (String) -> String, body: (String) -> [String: Any], expected: [Who: Int], destructive: Bool)
            let ops: [String: Op] = [
                "read group": ("GET", { "/v1/groups/\($0)" }, { _ in [:] },
                               [.owner: 200, .admin: 200, .member: 200, .nonMember: 404, .anonymous: 401], false),
                "list members": ("GET", { "/v1/groups/\($0)/members" }, { _ in [:] },
                                 [.owner: 200, .admin: 200, .member: 200, .nonMember: 404, .anonymous: 401], false),
                "edit group": ("PATCH", { "/v1/groups/\($0)" }, { _ in ["description": "edited"] },
                               [.owner: 200, .admin: 200, .member: 403, .nonMember: 404, .anonymous: 401], false),
                "invite": ("POST", { _ in "/v1/invitations" }, { ["type": "group", "referenceId": $0] },
                           [.owner: 201, .admin: 201, .member: 403, .nonMember: 404, .anonymous: 401], false),
                "change role": ("PATCH", { "/v1/groups/\($0)/members/\(target.uid)" }, { _ in ["role": "admin"] },
                                [.owner: 200, .admin: 403, .member: 403, .nonMember: 404, .anonymous: 401], true),
                "remove member": ("DELETE", { "/v1/groups/\($0)/members/\(target.uid)" }, { _ in [:] },
                                  [.owner: 204, .admin: 204, .member: 403, .nonMember: 404, .anonymous: 401], true),
                "transfer": ("POST", { "/v1/groups/\($0)/transfer" }, { _ in ["uid": target.uid] },
                             [.owner: 200, .admin: 403, .member: 403, .nonMember: 404, .anonymous: 401], true),
                "delete group": ("DELETE", { "/v1/groups/\($0)" }, { _ in [:] },
                                 [.owner: 204, .admin: 403, .member: 403, .nonMember: 404, .anonymous: 401], true),
            ]
            let shared = try await setup()
            var failures: [String] = []
            for (name, op) in ops.sorted(by: { $0.key < $1.key }) {
                for who in Who.allCases {
                    let g = op.destructive ? try await setup() : shared
                    let body = op.body(g)
                    let r = try await s.request(.init(rawValue: op.method), op.path(g), token: token(who), json: body.isEmpty ? nil : body)
                    if r.status != op.expected[who] { failures.append("\(name) as \(who.rawValue): \(r.status) (expected \(op.expected[who]!)) \(r.text)") }
                }
            }
            #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
            // A member may leave on their own.
            #expect(try await s.request(.DELETE, "/v1/groups/\(shared)/members/\(member.uid)", token: member.token).status == 204)
        }
    }

    @Test("alarm sharing by invitation: a Free invitee accepts and sees the alarm; removal from a group cascades to its alarms, and a removed member's own group alarms leave the group")
    func sharing() async throws {
        try await withSuite { s in
            let owner = try await premium(s, "Owner")
            let friend = try await s.signup("Friend")
            let created = try await s.request(.POST, "/v1/alarms", token: owner.token, json: ["title": "Pay rent", "schedule": scheduleJSON()])
            let alarm = try #require(created.json["id"]?.stringValue)
            #expect(try await s.request(.POST, "/v1/invitations", token: friend.token, json: ["type": "alarm", "referenceId": alarm]).code == "CA002")
            let inv = try await s.request(.POST, "/v1/invitations", token: owner.token,
                                          json: ["type": "alarm", "referenceId": alarm, "inviteeEmail": friend.email])
            #expect(inv.status == 201, "\(inv.text)")
            #expect(inv.json["referenceName"]?.stringValue == "Pay rent")
            let code = try #require(inv.json["id"]?.stringValue)
            #expect(try await s.request(.GET, "/v1/alarms/\(alarm)", token: friend.token).status == 404)
            #expect(try await s.request(.POST, "/v1/invitations/\(code)/accept", token: friend.token).status == 200)
            let visible = await eventually {
                (try? await s.request(.GET, "/v1/alarms/\(alarm)", token: friend.token))?.status == 200
            }
            #expect(visible, "the accepted invitation did not share the alarm")
            // Someone else's alarm cannot be shared; a deleted alarm cannot be invited to or joined.
            _ = try await s.setTier(friend, "premium")
            #expect(try await s.request(.POST, "/v1/invitations", token: friend.token, json: ["type": "alarm", "referenceId": alarm]).status == 403)
            let late = try await s.request(.POST, "/v1/invitations", token: owner.token, json: ["type": "alarm", "referenceId": alarm])
            let lateCode = try #require(late.json["id"]?.stringValue)
            #expect(try await s.request(.DELETE, "/v1/alarms/\(alarm)", token: owner.token).status == 204)
            #expect(try await s.request(.POST, "/v1/invitations", token: owner.token, json: ["type": "alarm", "referenceId": alarm]).status == 404)
            let revoked = await eventually {
                (try? await s.request(.GET, "/v1/invitations/\(lateCode)", token: friend.token))?.json["status"]?.stringValue == "revoked"
            }
            #expect(revoked)
            let gone = try await s.request(.POST, "/v1/invitations/\(lateCode)/accept", token: friend.token)
            #expect(gone.status == 409)
            #expect(gone.code == "CA028")

            // Group alarms: members see them; a removed member is taken off and unassigned.
            let g = try await group(s, owner)
            let member = try await s.signup("Member")
            try await join(s, g, owner: owner, member)
            // The alarms service learns the membership from the accounts stream.
            var groupAlarm: String?
            #expect(await eventually {
                let r = try? await s.request(.POST, "/v1/alarms", token: owner.token,
                                             json: ["title": "Change filter", "schedule": scheduleJSON(), "groupId": g, "assignedTo": member.uid])
                if r?.status == 201, let id = r?.json["id"]?.stringValue { groupAlarm = id; return true }
                return false
            })
            let ga = try #require(groupAlarm)
            #expect(try await s.request(.GET, "/v1/alarms/\(ga)", token: member.token).status == 200)
            #expect(try await s.request(.DELETE, "/v1/groups/\(g)/members/\(member.uid)", token: owner.token).status == 204)
            #expect(await eventually { (try? await s.request(.GET, "/v1/alarms/\(ga)", token: member.token))?.status == 404 })
            let after = try await s.request(.GET, "/v1/alarms/\(ga)", token: owner.token)
            #expect(after.json["assignedTo"] == .null)
            #expect(after.json["sharedWith"]?.arrayValue?.isEmpty == true)

            // An admin's own group alarm leaves the group with them (issue 57): the group's
            // members come off it, and someone who joins later is not added to it.
            let admin = try await s.signup("Admin")
            try await join(s, g, owner: owner, admin, admin: true)
            var adminAlarm: String?
            #expect(await eventually {
                let r = try? await s.request(.POST, "/v1/alarms", token: admin.token,
                                             json: ["title": "Water plants", "schedule": scheduleJSON(), "groupId": g])
                if r?.status == 201, let id = r?.json["id"]?.stringValue { adminAlarm = id; return true }
                return false
            })
            let aa = try #require(adminAlarm)
            #expect(await eventually { (try? await s.request(.GET, "/v1/alarms/\(aa)", token: owner.token))?.status == 200 })
            #expect(try await s.request(.DELETE, "/v1/groups/\(g)/members/\(admin.uid)", token: owner.token).status == 204)
            #expect(await eventually { (try? await s.request(.GET, "/v1/alarms/\(aa)", token: owner.token))?.status == 404 },
                    "the group's owner still reads the alarm of a member who left")
            let newcomer = try await s.signup("Newcomer")
            try await join(s, g, owner: owner, newcomer)
            await s.settle()
            let left = try await s.request(.GET, "/v1/alarms/\(aa)", token: admin.token)
            #expect(left.json["groupId"] == .null && left.json["sharedWith"]?.arrayValue?.isEmpty == true,
                    "the ex-member's alarm is still the group's: \(left.text)")
        }
    }

    @Test("expiry, revoke, member limit and rate limit each give a clear error")
    func limits() async throws {
        try await withSuite(["CHRONIR_INVITATIONS_PER_HOUR": "12", "CHRONIR_INVITATION_LIFETIME": "2s", "CHRONIR_INVITATION_SWEEP": "300ms"]) { s in
            let owner = try await premium(s, "Owner")
            let g = try await group(s, owner)
            let guest = try await s.signup("Guest")
            let soon = try await s.request(.POST, "/v1/invitations", token: owner.token, json: ["type": "group", "referenceId": g])
            let soonCode = try #require(soon.json["id"]?.stringValue)
            // The sweeper marks it expired once its lifetime is over.
            var status: String?
            #expect(await eventually(timeout: .seconds(15)) {
                status = try? await s.inDatabase("invitations") {
                    try await $0.query("SELECT status FROM invitations WHERE code = \(soonCode)").first(String.self)
                }
                return status == "expired"
            }, "the invitation was not swept: \(String(describing: status))")
            let expired = try await s.request(.POST, "/v1/invitations/\(soonCode)/accept", token: guest.token)
            #expect(expired.status == 410, "\(expired.text)")
            #expect(expired.code == "CA004")
            let sent = try await s.request(.GET, "/v1/invitations?role=inviter", token: owner.token)
            #expect(sent.json["invitations"]?.arrayValue?.first?["status"]?.stringValue == "expired")

            let revocable = try await s.request(.POST, "/v1/invitations", token: owner.token, json: ["type": "group", "referenceId": g])
            let rc = try #require(revocable.json["id"]?.stringValue)
            #expect(try await s.request(.DELETE, "/v1/invitations/\(rc)", token: guest.token).status == 404)
            #expect(try await s.request(.DELETE, "/v1/invitations/\(rc)", token: owner.token).json["status"]?.stringValue == "revoked")
            #expect(try await s.request(.POST, "/v1/invitations/\(rc)/accept", token: guest.token).code == "CA028")

            // Ten invitations used so far: two. Fill the group to 10 members with 9 more... the
            // hourly limit (12) stops the 13th invitation first.
            // The joiners sign up first: the invitations live 2 s, less than ten sign-ups take.
            var joiners: [TestUser] = []
            for _ in 0..<10 { joiners.append(try await s.signup("M")) }
            var codes: [String] = []
            for _ in 0..<10 {
                let r = try await s.request(.POST, "/v1/invitations", token: owner.token, json: ["type": "group", "referenceId": g])
                #expect(r.status == 201, "\(r.text)")
                codes.append(try #require(r.json["id"]?.stringValue, "\(r.text)"))
            }
            let limited = try await s.request(.POST, "/v1/invitations", token: owner.token, json: ["type": "group", "referenceId": g])
            #expect(limited.status == 429, "\(limited.text)")
            #expect(limited.code == "CA019")
            // 9 join (10 members); the 10th invitation hits the member limit.
            for (code, u) in zip(codes.prefix(9), joiners) {
                #expect(try await s.request(.POST, "/v1/invitations/\(code)/accept", token: u.token).status == 200)
            }
            let full = try await s.request(.POST, "/v1/invitations/\(codes[9])/accept", token: joiners[9].token)
            #expect(full.status == 409, "\(full.text)")
            #expect(full.code == "CA003")
            let members = try await s.request(.GET, "/v1/groups/\(g)/members", token: owner.token)
            #expect(members.json["members"]?.arrayValue?.count == 10)
        }
    }
}
