import Contracts
import Foundation
import InvitationsService
import Messaging
import Support
@testable import SuiteSupport
import Testing

/// Sharing by consent (`chronir-api.md` §6.2, US-10.1; issue 41 item 1): `sharedWith` lists only
/// people who accepted an invitation (or belong to the alarm's group); members leave or are
/// taken off. Real services through the gateway.
@Suite("Sharing by consent")
struct SharingConsentTests {
    func withSuite(_ body: (TestSuite) async throws -> Void) async throws {
        try await withTestSuite(label: "consent", start: { s in
            try s.startCore()
            try s.start("invitations", migrations: InvitationsService.migrations, extra: ["CHRONIR_INVITATIONS_PER_HOUR": "1000"],
                        build: InvitationsService.build)
        }, body)
    }

    /// The alarm as `user` reads it, once `check` holds (the acceptance travels as an event).
    func alarm(_ s: TestSuite, _ id: String, as user: TestUser, until check: @escaping @Sendable (HTTPResult) -> Bool) async throws -> HTTPResult {
        var last: HTTPResult?
        let ok = await eventually(timeout: .seconds(15)) {
            last = try? await s.request(.GET, "/v1/alarms/\(id)", token: user.token)
            return last.map(check) ?? false
        }
        let result = try #require(last)
        #expect(ok, "alarm \(id) as \(user.email): \(result.status) \(result.text)")
        return result
    }

    static func members(_ r: HTTPResult) -> [String] { r.json["sharedWith"]?.arrayValue?.compactMap(\.stringValue) ?? [] }

    @Test("sharedWith takes only people who accepted an invitation (CA035 names the field and them); members leave or are taken off")
    func consent() async throws {
        try await withSuite { s in
            let owner = try await s.signup("Owner")
            _ = try await s.setTier(owner, "premium")
            let friend = try await s.signup("Friend")
            let stranger = try await s.signup("Stranger")

            // Naming someone directly is refused, on create and on update, with the field and the people.
            let direct = try await s.request(.POST, "/v1/alarms", token: owner.token,
                                             json: ["title": "Bins", "schedule": scheduleJSON(), "sharedWith": [friend.uid]])
            #expect(direct.status == 400, "\(direct.text)")
            #expect(direct.code == "CA035")
            #expect(direct.json["details"]?["field"]?.stringValue == "sharedWith")
            #expect(direct.json["details"]?["userIds"]?.arrayValue?.compactMap(\.stringValue) == [friend.uid])
            let created = try await s.request(.POST, "/v1/alarms", token: owner.token, json: ["title": "Bins", "schedule": scheduleJSON()])
            let id = try #require(created.json["id"]?.stringValue, "\(created.text)")
            let patched = try await s.request(.PATCH, "/v1/alarms/\(id)", token: owner.token, json: ["sharedWith": [friend.uid]])
            #expect(patched.status == 400 && patched.code == "CA035", "\(patched.text)")
            #expect(try await s.request(.GET, "/v1/alarms/\(id)", token: friend.token).status == 404, "a refused share must not show the alarm")

            // An invitation to the account: only that account sees and answers it.
            let unknown = try await s.request(.POST, "/v1/invitations", token: owner.token,
                                              json: ["type": "alarm", "referenceId": id, "inviteeUserId": "no-such-user-0001"])
            #expect(unknown.status == 404, "\(unknown.text)")
            let both = try await s.request(.POST, "/v1/invitations", token: owner.token,
                                           json: ["type": "alarm", "referenceId": id, "inviteeUserId": friend.uid, "inviteeEmail": friend.email])
            #expect(both.status == 400, "\(both.text)")
            let invite = try await s.request(.POST, "/v1/invitations", token: owner.token,
                                             json: ["type": "alarm", "referenceId": id, "inviteeUserId": friend.uid])
            #expect(invite.status == 201, "\(invite.text)")
            #expect(invite.json["inviteeUserId"]?.stringValue == friend.uid)
            let code = try #require(invite.json["id"]?.stringValue)
            #expect(try await s.request(.GET, "/v1/invitations/\(code)", token: stranger.token).status == 404)
            #expect(try await s.request(.POST, "/v1/invitations/\(code)/accept", token: stranger.token).status == 403)
            let pending = try await s.request(.GET, "/v1/invitations?role=invitee", token: friend.token)
            #expect(pending.json["invitations"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [code], "\(pending.text)")
            #expect(try await s.request(.GET, "/v1/invitations?role=invitee", token: stranger.token).json["invitations"]?.arrayValue?.isEmpty == true)
            let accepted = try await s.request(.POST, "/v1/invitations/\(code)/accept", token: friend.token)
            #expect(accepted.status == 200, "\(accepted.text)")
            let shared = try await alarm(s, id, as: friend) { $0.status == 200 }
            #expect(Self.members(shared) == [friend.uid])

            // Keeping an accepted member passes; adding anyone else is refused, naming only them.
            let kept = try await s.request(.PATCH, "/v1/alarms/\(id)", token: owner.token, json: ["title": "Bins out", "sharedWith": [friend.uid]])
            #expect(kept.status == 200, "\(kept.text)")
            let more = try await s.request(.PATCH, "/v1/alarms/\(id)", token: owner.token, json: ["sharedWith": [friend.uid, stranger.uid]])
            #expect(more.code == "CA035", "\(more.text)")
            #expect(more.json["details"]?["userIds"]?.arrayValue?.compactMap(\.stringValue) == [stranger.uid])

            // The member leaves; nobody else may take them off.
            #expect(try await s.request(.DELETE, "/v1/alarms/\(id)/members/\(friend.uid)", token: stranger.token).status == 404)
            #expect(try await s.request(.DELETE, "/v1/alarms/\(id)/members/\(owner.uid)", token: friend.token).status == 403)
            #expect(try await s.request(.DELETE, "/v1/alarms/\(id)/members/me", token: owner.token).status == 400, "the owner deletes instead")
            let left = try await s.request(.DELETE, "/v1/alarms/\(id)/members/me", token: friend.token)
            #expect(left.status == 204, "\(left.text)")
            #expect(try await s.request(.GET, "/v1/alarms/\(id)", token: friend.token).status == 404)
            #expect(Self.members(try await s.request(.GET, "/v1/alarms/\(id)", token: owner.token)).isEmpty)
            // Having left, they are not a member to re-add: a new invitation is needed.
            #expect(try await s.request(.PATCH, "/v1/alarms/\(id)", token: owner.token, json: ["sharedWith": [friend.uid]]).code == "CA035")

            // By address this time, and the owner takes them off.
            let byMail = try await s.request(.POST, "/v1/invitations", token: owner.token,
                                             json: ["type": "alarm", "referenceId": id, "inviteeEmail": friend.email])
            let mailCode = try #require(byMail.json["id"]?.stringValue, "\(byMail.text)")
            #expect(try await s.request(.POST, "/v1/invitations/\(mailCode)/accept", token: friend.token).status == 200)
            _ = try await alarm(s, id, as: friend) { $0.status == 200 }
            #expect(try await s.request(.DELETE, "/v1/alarms/\(id)/members/\(friend.uid)", token: owner.token).status == 204)
            #expect(try await s.request(.GET, "/v1/alarms/\(id)", token: friend.token).status == 404)
            #expect(try await s.request(.DELETE, "/v1/alarms/\(id)/members/\(friend.uid)", token: owner.token).status == 404, "not a member any more")

            // A device's own alarms still import; one naming someone fails alone, with CA035.
            let imported = try await s.request(.POST, "/v1/alarms:batchImport", token: owner.token, json: ["alarms": [
                ["id": "local-alarm-0001", "title": "Mine", "schedule": scheduleJSON()],
                ["id": "local-alarm-0002", "title": "Theirs", "schedule": scheduleJSON(), "sharedWith": [stranger.uid]],
            ]])
            #expect(imported.status == 200, "\(imported.text)")
            let results = imported.json["results"]?.arrayValue ?? []
            #expect(results.map { $0["status"]?.stringValue } == ["created", "failed"], "\(imported.text)")
            #expect(results.last?["error"]?["code"]?.stringValue == "CA035")

            let types = try await s.checkPublishedEvents(["alarms", "invitations"])
            #expect(types.contains("invitations.invitation-accepted"), "\(types)")
        }
    }
}
