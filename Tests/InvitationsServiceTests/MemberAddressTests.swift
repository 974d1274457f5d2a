import Foundation
import Support
@testable import SuiteSupport
import Testing

/// Who reads a group member's address (issue 74): the owner and the admins, who invite and
/// manage; a member reads their own, and the others' names only — an anonymous account that
/// joined through a forwarded open link included.
extension GroupsInvitationsTests {
    @Test("member addresses: the owner and an admin read every member's; a member and an anonymous joiner read only their own, and every name")
    func memberAddresses() async throws {
        try await withSuite { s in
            let owner = try await premium(s, "Owner")
            let admin = try await s.signup("Admin")
            let member = try await s.signup("Member")
            let g = try await group(s, owner)
            try await join(s, g, owner: owner, admin, admin: true)
            try await join(s, g, owner: owner, member)
            // Someone the open link was forwarded to, signed in anonymously.
            let anon = try await s.request(.POST, "/v1/auth/anonymous", json: [String: String]())
            let anonToken = try #require(anon.json["accessToken"]?.stringValue, "\(anon.text)")
            let anonUID = try #require(anon.json["user"]?["uid"]?.stringValue)
            try await join(s, g, owner: owner, TestUser(uid: anonUID, token: anonToken, email: "", refreshToken: nil))

            let addresses = [owner.uid: owner.email, admin.uid: admin.email, member.uid: member.email]
            func read(_ token: String) async throws -> [String: (name: String, email: String)] {
                let r = try await s.request(.GET, "/v1/groups/\(g)/members", token: token)
                #expect(r.status == 200, "\(r.text)")
                var out: [String: (String, String)] = [:]
                for m in r.json["members"]?.arrayValue ?? [] {
                    out[m["uid"]?.stringValue ?? "?"] = (m["displayName"]?.stringValue ?? "", m["email"]?.stringValue ?? "<missing>")
                }
                return out
            }
            for (who, token) in [("owner", owner.token), ("admin", admin.token)] {
                let seen = try await read(token)
                #expect(seen.count == 4, "\(who): \(seen)")
                for (uid, email) in addresses { #expect(seen[uid]?.email == email, "\(who) reads \(uid)'s address") }
            }
            for (who, uid, token) in [("member", member.uid, member.token), ("anonymous joiner", anonUID, anonToken)] {
                let seen = try await read(token)
                #expect(seen.count == 4, "\(who): \(seen)")
                for (other, entry) in seen where other != uid {
                    #expect(entry.email == "", "\(who) reads \(other)'s address \(entry.email)")
                    #expect(!entry.name.isEmpty, "\(who) sees \(other)'s name")
                }
                #expect(seen[uid]?.email == (addresses[uid] ?? ""), "\(who) reads their own")
            }
        }
    }
}
