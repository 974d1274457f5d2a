import Foundation
import Support
@testable import SuiteSupport
import Testing

/// Issue 74: imports of inactive alarms count no active limit and no creation rate; the total an
/// account holds is capped (`CHRONIR_ALARMS_PER_ACCOUNT`).
@Suite("Stored alarms per account")
struct StoredAlarmLimitTests {
    @Test("importing inactive alarms stops at the account's cap (CA001 per alarm past it), and so does a creation; deleting one makes room")
    func importOfInactiveAlarmsIsCapped() async throws {
        try await withTestSuite(label: "stored", start: { s in
            try s.startCore(alarmsExtra: ["CHRONIR_ALARMS_PER_ACCOUNT": "5"])
        }) { s in
            let u = try await s.signup("Hoarder")
            let batch = (0..<8).map { i -> [String: Any] in
                ["id": "inactive-\(i)-\(UUID().uuidString.lowercased())", "title": "Dormant \(i)", "schedule": scheduleJSON(), "isActive": false]
            }
            let r = try await s.request(.POST, "/v1/alarms:batchImport", token: u.token, json: ["alarms": batch])
            #expect(r.status == 200, "\(r.text)")
            #expect(r.json["created"]?.intValue == 5 && r.json["failed"]?.intValue == 3, "\(r.text)")
            let codes = (r.json["results"]?.arrayValue ?? []).compactMap { $0["error"]?["code"]?.stringValue }
            #expect(codes == ["CA001", "CA001", "CA001"], "\(codes)")
            let more = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "One more", "schedule": scheduleJSON(), "isActive": false])
            #expect(more.status == 403 && more.code == "CA001", "\(more.status) \(more.text)")
            let first = try #require((r.json["results"]?.arrayValue ?? []).first?["id"]?.stringValue)
            #expect(try await s.request(.DELETE, "/v1/alarms/\(first)", token: u.token).status == 204)
            let room = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "Room now", "schedule": scheduleJSON(), "isActive": false])
            #expect(room.status == 201, "\(room.text)")
        }
    }
}
