import Foundation
import Support
@testable import SuiteSupport
import Testing

/// An open group link accepted by several people at once (issue 60): the member is added in
/// accounts between two transactions, not under the invitation's lock, and the claim written by
/// the first keeps the link to one acceptor. Exactly one joins; the others are told the link is
/// taken (being joined, or already accepted), and none of them is in the group.
extension GroupsInvitationsTests {
    @Test("an open group link accepted by six people at once adds exactly one member; the others get CA010 or CA005")
    func openLinkRace() async throws {
        try await withSuite { s in
            let owner = try await premium(s, "Owner")
            let g = try await group(s, owner)
            var users: [TestUser] = []
            for k in 0..<6 { users.append(try await s.signup("Racer\(k)")) }
            let inv = try await s.request(.POST, "/v1/invitations", token: owner.token, json: ["type": "group", "referenceId": g])
            #expect(inv.status == 201, "\(inv.text)")
            let code = try #require(inv.json["id"]?.stringValue)
            let answers = try await withThrowingTaskGroup(of: (String, Int, String?).self) { group in
                for u in users {
                    group.addTask {
                        let r = try await s.request(.POST, "/v1/invitations/\(code)/accept", token: u.token)
                        return (u.uid, r.status, r.code)
                    }
                }
                var out: [(String, Int, String?)] = []
                for try await a in group { out.append(a) }
                return out
            }
            let joined = answers.filter { $0.1 == 200 }
            #expect(joined.count == 1, "\(answers)")
            for a in answers where a.1 != 200 {
                #expect(a.1 == 409 && (a.2 == "CA010" || a.2 == "CA005"), "\(a)")
            }
            let members = try await s.request(.GET, "/v1/groups/\(g)/members", token: owner.token)
            let ids = Set(members.json["members"]?.arrayValue?.compactMap { $0["uid"]?.stringValue ?? $0["userId"]?.stringValue } ?? [])
            #expect(ids.count == 2, "\(members.text)")
            #expect(ids.contains(owner.uid))
            if let winner = joined.first?.0 { #expect(ids.contains(winner), "\(members.text)") }
            // The link is spent: a latecomer is refused, and nothing was left claimed.
            let late = try await s.signup("Late")
            let refused = try await s.request(.POST, "/v1/invitations/\(code)/accept", token: late.token)
            #expect(refused.status == 409 && refused.code == "CA005", "\(refused.text)")
            let claimed = try await s.inDatabase("invitations") {
                try await $0.query("SELECT count(*)::int FROM invitations WHERE claimed_by IS NOT NULL").first(Int.self)
            }
            #expect(claimed == 0)
        }
    }
}
