import Foundation
import PostgresNIO
import SchedulerService
import Support
@testable import SuiteSupport
import Testing

/// A client's inbox cursor (`since`, the live stream's `Last-Event-ID`) survives a database
/// that went back (issue 75): the notifications service keeps the inbox's id sequence at the
/// database clock's microseconds (``NotificationStore/raiseIdFloor()``), so the rows written
/// after the rewind are numbered above every id a client may hold. Before, they reused the ids
/// the rewind took back, at or below the client's cursor, and the client was never sent them.
@Suite("Inbox cursors across a rewound database")
struct InboxRewindTests {
    @Test("after the inbox went back past a client's cursor, the next row is still after that cursor")
    func cursorSurvivesRewind() async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        try await withTestSuite(label: "inbox-rewind", start: { s in
            try s.startCore()
            try s.start("scheduler", migrations: SchedulerService.migrations,
                        extra: ["CHRONIR_SCHEDULER_PARTITIONS": "16"], build: SchedulerService.build)
            try s.startNotifications(push)
        }) { s in
            let u = try await s.signup("Rewound")
            _ = try await s.setTier(u, "plus")   // three alarms
            func fire(_ title: String) async throws {
                let created = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": title, "schedule": scheduleJSON("annual", day: 1)])
                let id = try #require(created.json["id"]?.stringValue, "\(created.text)")
                try await s.fireAgain(id)
            }
            func inbox(since: Int64) async throws -> [Int64] {
                let r = try await s.request(.GET, "/v1/me/notifications?since=\(since)", token: u.token)
                return (r.json["notifications"]?.arrayValue ?? []).compactMap { $0["id"]?.intValue.map(Int64.init) }
            }
            try await fire("First")
            #expect(await eventually(timeout: .seconds(15)) { ((try? await inbox(since: 0)) ?? []).count == 1 })
            try await fire("Second")
            #expect(await eventually(timeout: .seconds(15)) { ((try? await inbox(since: 0)) ?? []).count == 2 })
            let seen = try await inbox(since: 0)
            let (first, cursor) = (try #require(seen.first), try #require(seen.last))

            // The database goes back to just after the first row: the client holds the second's id.
            try await s.inDatabase("notifications") { db in
                try await db.query("DELETE FROM deliveries WHERE inbox_id = \(cursor)")
                try await db.query("DELETE FROM inbox WHERE id = \(cursor)")
                try await db.query("SELECT setval('inbox_id_seq', \(first))")
            }
            try await Task.sleep(for: .milliseconds(1_500))
            try await fire("Third")
            #expect(await eventually(timeout: .seconds(15)) { ((try? await inbox(since: 0)) ?? []).count == 2 }, "the third row never came")
            let after = try await inbox(since: cursor)
            let all = try await inbox(since: 0)
            #expect(after.count == 1, "the client's cursor \(cursor) passes the new row: \(all)")
        }
    }
}
