@testable import AlarmsService
import Foundation
import Persistence
import PostgresNIO
import Support
@testable import SuiteSupport
import Testing

/// What marks and lists cost PostgreSQL: marks rewrite their alarms and feed entries in place
/// (no index holds what they change), and every list can be answered from an index.
extension CompletionBatchTests {
    /// Updates and HOT updates of `table` in the alarms schema, as the statistics have them.
    func updates(_ db: Database, _ table: String) async throws -> (all: Int64, hot: Int64) {
        let rows = try await db.query("""
            SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = \(table)
            """)
        for try await (all, hot) in rows.decode((Int64, Int64).self) { return (all, hot) }
        throw TestSetupError("no statistics for \(table)")
    }

    @Test("a batch of marks updates its alarms and feed entries in place: no new index entry (HOT)")
    func marksAreHeapOnly() async throws {
        try await withTestSuite(label: "marks-hot", start: { try $0.startCore() }) { s in
            let (owner, list) = try await alarms(s, 6)
            try await withBatch(s) { batch, db in
                let alarmsBefore = try await updates(db, "alarms"), feedBefore = try await updates(db, "feed_entries")
                let answers = await batch.record(list.map { mark($0.id, by: owner.uid) })
                #expect(answers.allSatisfy { (try? $0.get())?.created == true })
                // The statistics arrive when the marking connection goes idle (PostgreSQL 15: within 10 s).
                var alarmsAfter = alarmsBefore, feedAfter = feedBefore
                let seen = try await eventually(timeout: .seconds(30), every: .milliseconds(250)) {
                    alarmsAfter = try await updates(db, "alarms")
                    feedAfter = try await updates(db, "feed_entries")
                    return alarmsAfter.all - alarmsBefore.all >= Int64(list.count) && feedAfter.all - feedBefore.all >= Int64(list.count)
                }
                #expect(seen, "updates never counted: alarms \(alarmsBefore) → \(alarmsAfter), feed \(feedBefore) → \(feedAfter)")
                // Every update since was heap-only: the non-HOT count did not move.
                #expect(alarmsAfter.all - alarmsAfter.hot == alarmsBefore.all - alarmsBefore.hot,
                        "alarms: \(alarmsBefore) → \(alarmsAfter) (updates, HOT updates)")
                #expect(feedAfter.all - feedAfter.hot == feedBefore.all - feedBefore.hot,
                        "feed_entries: \(feedBefore) → \(feedAfter) (updates, HOT updates)")
            }
        }
    }

    @Test("every list of alarms finds its rows through an index condition on owner, sharer or group")
    func listsUseIndexes() async throws {
        try await withTestSuite(label: "lists-indexed", start: { try $0.startCore() }) { s in
            let (owner, _) = try await alarms(s, 2)
            // The conditions each scope's plan must search an index with. A whole-index read
            // does not count: the GIN index's predicate (`deleted_at IS NULL`) matches every
            // list, so PostgreSQL can read all of it without a condition, which is a full scan
            // by another name (what `user = ANY(shared_with)` got).
            let scopes: [(String, AlarmStore.ListScope, [String])] = [
                ("all", .all, ["Index Cond: (owner_id = ", "Index Cond: (shared_with @> "]),
                ("mine", .mine, ["Index Cond: (owner_id = "]),
                ("shared", .shared, ["Index Cond: (shared_with @> "]),
                ("group", .group("g1"), ["Index Cond: (group_id = "]),
            ]
            try await s.inDatabase("alarms") { db in
                for (name, scope, conditions) in scopes {
                    let q = try AlarmStore.listQuery(for: owner.uid, scope: scope, active: true, when: .upcoming, type: nil, title: nil,
                                                     after: nil, limit: 50)
                    let plan = try await explain(db, q)
                    #expect(!plan.contains("Seq Scan"), "scope \(name) reads the whole table:\n\(plan)")
                    for condition in conditions {
                        #expect(plan.contains(condition), "scope \(name) has no \(condition)…:\n\(plan)")
                    }
                }
                let calendar = try await explain(db, AlarmStore.activeAlarmsQuery(visibleTo: owner.uid))
                for condition in ["Index Cond: (owner_id = ", "Index Cond: (shared_with @> "] {
                    #expect(calendar.contains(condition), "a user's calendar has no \(condition)…:\n\(calendar)")
                }
            }
        }
    }

    /// The plan PostgreSQL would run `q` with, sequential scans priced out (still chosen
    /// when no index can answer).
    func explain(_ db: Database, _ q: PostgresQuery) async throws -> String {
        try await db.transaction { c in
            _ = try await c.query("SET LOCAL enable_seqscan = off", logger: db.logger)
            var lines: [String] = []
            for try await line in try await c.query(PostgresQuery(unsafeSQL: "EXPLAIN " + q.sql, binds: q.binds),
                                                    logger: db.logger).decode(String.self) {
                lines.append(line)
            }
            return lines.joined(separator: "\n")
        }
    }
}
