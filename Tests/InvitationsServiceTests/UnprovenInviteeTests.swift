import Contracts
import Foundation
import InvitationsService
import Support
@testable import SuiteSupport
import Testing

/// Invitations bound to an address, attacked through the API: sign up with the invitee's
/// address (nobody checks it) and answer, read or revoke their invitation.
@Suite("Invitations answer only proven invitees")
struct UnprovenInviteeTests {
    func withSuite(_ body: (TestSuite) async throws -> Void) async throws {
        try await withTestSuite(label: "unproven", start: { s in
            try s.startCore()
            try s.start("invitations", migrations: InvitationsService.migrations, extra: ["CHRONIR_INVITATIONS_PER_HOUR": "1000"],
                        build: InvitationsService.build)
        }, body)
    }

    func premiumGroup(_ s: TestSuite) async throws -> (owner: TestUser, group: String) {
        let owner = try await s.signup("Owner")
        _ = try await s.setTier(owner, "premium")
        let r = try await s.request(.POST, "/v1/groups", token: owner.token, json: ["name": "Household", "iconName": "house"])
        #expect(r.status == 201, "\(r.text)")
        return (owner, try #require(r.json["id"]?.stringValue))
    }

    func invite(_ s: TestSuite, _ owner: TestUser, group: String, email: String?) async throws -> String {
        var body: [String: String] = ["type": "group", "referenceId": group]
        body["inviteeEmail"] = email
        let r = try await s.request(.POST, "/v1/invitations", token: owner.token, json: body)
        #expect(r.status == 201, "\(r.text)")
        return try #require(r.json["id"]?.stringValue)
    }

    @Test("an account that only claims the invitee's address cannot accept, decline, list or read the invitation (403 CA034 / empty), nor revoke it by deleting itself; the proven invitee accepts")
    func claimedAddress() async throws {
        try await withSuite { s in
            let (owner, group) = try await premiumGroup(s)
            // The attacker signs up with the address the owner is about to invite.
            let target = "partner-\(UInt32.random(in: 0...UInt32.max))@example.com"
            let claim = try await s.request(.POST, "/v1/auth/signup", json: ["email": target, "password": "attacker pass", "displayName": "Mallory"])
            #expect(claim.status == 201, "\(claim.text)")
            let attacker = TestUser(uid: try #require(claim.json["user"]?["uid"]?.stringValue),
                                    token: try #require(claim.json["accessToken"]?.stringValue), email: target)
            let code = try await invite(s, owner, group: group, email: target)

            for action in ["accept", "decline"] {
                let r = try await s.request(.POST, "/v1/invitations/\(code)/\(action)", token: attacker.token)
                #expect(r.status == 403, "\(action): \(r.text)")
                #expect(r.code == "CA034", "\(action): \(r.text)")
            }
            let read = try await s.request(.GET, "/v1/invitations/\(code)", token: attacker.token)
            #expect(read.status == 403 && read.code == "CA034", "\(read.text)")
            let listed = try await s.request(.GET, "/v1/invitations?role=invitee", token: attacker.token)
            #expect(listed.status == 200 && listed.json["invitations"]?.arrayValue?.isEmpty == true, "\(listed.text)")
            let members = try await s.request(.GET, "/v1/groups/\(group)", token: owner.token)
            #expect(!members.text.contains(attacker.uid), "the attacker joined: \(members.text)")

            // Deleting the claiming account does not revoke the invitation sent to the address.
            #expect(try await s.request(.DELETE, "/v1/me", token: attacker.token).status == 204)
            #expect(await eventually(timeout: .seconds(20)) {
                let rows = try? await s.inDatabase("invitations") {
                    try await $0.query("SELECT count(*)::int FROM users WHERE uid = \(attacker.uid)").first(Int.self)
                }
                return rows == 0
            }, "invitations never heard of the deletion")
            let still = try await s.request(.GET, "/v1/invitations/\(code)", token: owner.token)
            #expect(still.json["status"]?.stringValue == "pending", "\(still.text)")
            #expect(still.json["inviteeEmail"]?.stringValue == target, "\(still.text)")

            // The address's real owner proves it and accepts.
            let realOwner = try await s.request(.POST, "/v1/auth/signup", json: ["email": target, "password": "correct horse", "displayName": "Pat"])
            #expect(realOwner.status == 201, "\(realOwner.text)")
            let partner = try await s.verifyEmail(TestUser(uid: try #require(realOwner.json["user"]?["uid"]?.stringValue),
                                                           token: try #require(realOwner.json["accessToken"]?.stringValue), email: target))
            let mine = try await s.request(.GET, "/v1/invitations?role=invitee", token: partner.token)
            #expect(mine.json["invitations"]?.arrayValue?.map { $0["id"]?.stringValue } == [code], "\(mine.text)")
            let accepted = try await s.request(.POST, "/v1/invitations/\(code)/accept", token: partner.token)
            #expect(accepted.status == 200, "\(accepted.text)")
        }
    }

    @Test("GET /v1/invitations/{code}: a direct invitation is 404 to strangers and anonymous accounts; an open link shows strangers no address and no acceptor; the inviter sees it whole")
    func visibility() async throws {
        try await withSuite { s in
            let (owner, group) = try await premiumGroup(s)
            let partner = try await s.signup("Partner")
            let stranger = try await s.signup("Stranger")
            let anonymous = try await s.request(.POST, "/v1/auth/anonymous", json: [:] as [String: String])
            let anonToken = try #require(anonymous.json["accessToken"]?.stringValue, "\(anonymous.text)")

            let direct = try await invite(s, owner, group: group, email: partner.email)
            for (who, token) in [("stranger", stranger.token), ("anonymous", anonToken)] {
                let r = try await s.request(.GET, "/v1/invitations/\(direct)", token: token)
                #expect(r.status == 404, "\(who): \(r.text)")
                #expect(!r.text.contains(partner.email), "\(who) saw the address: \(r.text)")
            }
            #expect(try await s.request(.GET, "/v1/invitations/\(direct)", token: owner.token).json["inviteeEmail"]?.stringValue == partner.email)
            #expect(try await s.request(.GET, "/v1/invitations/\(direct)", token: partner.token).json["inviteeEmail"]?.stringValue == partner.email)

            let link = try await invite(s, owner, group: group, email: nil)
            #expect(try await s.request(.POST, "/v1/invitations/\(link)/accept", token: partner.token).status == 200)
            let seen = try await s.request(.GET, "/v1/invitations/\(link)", token: stranger.token)
            #expect(seen.status == 200, "\(seen.text)")
            #expect(seen.json["referenceName"]?.stringValue == "Household")
            #expect(seen.json["inviterDisplayName"]?.stringValue == "Owner")
            #expect(seen.json["acceptedBy"] == nil || seen.json["acceptedBy"] == .null, "\(seen.text)")
            #expect(!seen.text.contains(partner.uid) && !seen.text.contains("@"), "\(seen.text)")
            #expect(try await s.request(.GET, "/v1/invitations/\(link)", token: owner.token).json["acceptedBy"]?.stringValue == partner.uid)
        }
    }
}
