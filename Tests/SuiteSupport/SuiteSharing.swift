import Foundation
import InvitationsService
import Support

extension TestSuite {
    /// Starts the invitations service: sharing an alarm with a person goes through an invitation.
    func startInvitations(extra: [String: String] = ["CHRONIR_INVITATIONS_PER_HOUR": "1000"]) throws {
        try start("invitations", migrations: InvitationsService.migrations, extra: extra, build: InvitationsService.build)
    }

    /// Invites `invitee` to the alarm or group `referenceId` of `owner` and returns the code,
    /// asking again until invitations has heard of the new account (404 until then).
    func invite(_ type: String, _ referenceId: String, by owner: TestUser, to invitee: TestUser) async throws -> String {
        var invite: HTTPResult?
        _ = await eventually(timeout: .seconds(15)) {
            invite = try? await self.request(.POST, "/v1/invitations", token: owner.token,
                                             json: ["type": type, "referenceId": referenceId, "inviteeUserId": invitee.uid])
            return invite?.status == 201
        }
        guard invite?.status == 201, let code = invite?.json["id"]?.stringValue else {
            throw TestSetupError("cannot invite \(invitee.email) to \(type) \(referenceId): \(invite?.status ?? 0) \(invite?.text ?? "")")
        }
        return code
    }

    /// Shares alarm `id` of `owner` (Premium) with `members` the way people do: an invitation to
    /// each one's account, accepted by them; returns once alarms lists every one of them.
    /// Needs the invitations service (``startInvitations(extra:)``).
    func share(_ id: String, owner: TestUser, with members: [TestUser]) async throws {
        for member in members {
            let code = try await invite("alarm", id, by: owner, to: member)
            let accepted = try await request(.POST, "/v1/invitations/\(code)/accept", token: member.token)
            guard accepted.status == 200 else { throw TestSetupError("accepting \(code): \(accepted.status) \(accepted.text)") }
        }
        let uids = Set(members.map(\.uid))
        let joined = await eventually(timeout: .seconds(15)) {
            let a = try? await request(.GET, "/v1/alarms/\(id)", token: owner.token)
            let shared = Set(a?.json["sharedWith"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            return shared.isSuperset(of: uids)
        }
        guard joined else { throw TestSetupError("alarm \(id) was not shared with \(members.map(\.email)) in time") }
    }
}
