import Foundation
import InvitationsService
import Support
@testable import SuiteSupport
import Testing

/// An alarm made in a group while members are joining it ends up with every member: the
/// alarms service's copy of the group and the alarms it reshares are changed under the group's
/// lock, which a creation reads the members under (`AlarmStore.lockGroup`). A soak run left 23
/// member-alarm pairs out without it: the creation read the members before a join and
/// committed after the join had reshared the group's alarms.
@Suite("Group alarms made while members join")
struct GroupAlarmRaceTests {
    let groups = GroupsInvitationsTests()

    @Test("alarms made in a group while 6 members join one by one: every alarm ends with every member")
    func everyMember() async throws {
        try await groups.withSuite { s in
            let owner = try await groups.premium(s, "Owner")
            let g = try await groups.group(s, owner)
            var signedUp: [TestUser] = []
            for i in 0..<6 { signedUp.append(try await s.signup("Joiner\(i)")) }
            let joiners = signedUp
            let made = try await withThrowingTaskGroup(of: [String].self) { [groups] tasks in
                tasks.addTask {
                    for u in joiners { try await groups.join(s, g, owner: owner, u) }
                    return []
                }
                for lane in 0..<4 {
                    tasks.addTask {
                        var ids: [String] = []
                        for k in 0..<12 {
                            let r = try await s.request(.POST, "/v1/alarms", token: owner.token, json: [
                                "title": "Bins \(lane)-\(k)", "groupId": g, "schedule": scheduleJSON()])
                            #expect(r.status == 201, "\(r.text)")
                            if let id = r.json["id"]?.stringValue { ids.append(id) }
                        }
                        return ids
                    }
                }
                var all: [String] = []
                for try await ids in tasks { all += ids }
                return all
            }
            #expect(made.count == 48)
            let everyone = Set(joiners.map(\.uid))
            var missing: [String: Set<String>] = [:]
            for _ in 0..<40 {
                missing = [:]
                let r = try await s.request(.GET, "/v1/alarms?scope=mine&limit=200", token: owner.token)
                for a in r.json["alarms"]?.arrayValue ?? [] {
                    guard let id = a["id"]?.stringValue, made.contains(id) else { continue }
                    let shared = Set((a["sharedWith"]?.arrayValue ?? []).compactMap(\.stringValue))
                    if !everyone.isSubset(of: shared) { missing[id] = everyone.subtracting(shared) }
                }
                if missing.isEmpty { break }
                try await Task.sleep(for: .milliseconds(250))
            }
            #expect(missing.isEmpty, "\(missing.count) alarms lack members 10 s after the last join: \(missing.values.map(\.count))")
        }
    }
}
