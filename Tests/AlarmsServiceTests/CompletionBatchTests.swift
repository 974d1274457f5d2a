@testable import AlarmsService
import Contracts
import Foundation
import Messaging
import Outbox
import Persistence
import Support
@testable import SuiteSupport
import Testing

/// Marking occurrences in batches (group commit) against the real alarms schema: each mark is
/// answered as it would be alone.
@Suite("Completions in batches")
struct CompletionBatchTests {
    static let week: TimeInterval = 7 * 86_400

    /// A premium user with `count` weekly alarms, and each alarm's pending occurrence.
    func alarms(_ s: TestSuite, _ count: Int) async throws -> (TestUser, [(id: String, due: Date)]) {
        let owner = try await s.signup("Owner")
        try await s.setTier(owner, "premium")
        // Alarms learns display names from the accounts stream; the owner signed up a moment ago.
        let known = try await eventually {
            try await s.inDatabase("alarms") {
                try await $0.query("SELECT display_name FROM users WHERE user_id = \(owner.uid)").first(String.self) == "Owner"
            }
        }
        guard known else { throw TestSetupError("alarms never learned the owner's display name") }
        var out: [(String, Date)] = []
        for _ in 0..<count {
            let r = try await s.request(.POST, "/v1/alarms", token: owner.token, json: ["title": "Filter", "schedule": scheduleJSON("weekly", day: 1)])
            let id = try #require(r.json["id"]?.stringValue, "create: \(r.status) \(r.text)")
            out.append((id, try #require(r.json["nextFireDate"]?.stringValue.flatMap(ISOTime.parse))))
        }
        return (owner, out)
    }

    /// Runs `body` with a batch writer on the suite's alarms schema.
    func withBatch(_ s: TestSuite, _ body: (CompletionBatch, Database) async throws -> Void) async throws {
        try await s.inDatabase("alarms") { db in
            let store = AlarmStore(database: db)
            let outbox = OutboxWriter(stream: "alarms", source: "tests/1", telemetry: .discarding(), database: db, relay: nil)
            try await body(CompletionBatch(store: store, changes: AlarmChanges(store: store, outbox: outbox), outbox: outbox,
                                           missedWindow: .seconds(7200)), db)
        }
    }

    func mark(_ id: String, _ status: String = "completed", at: Date? = nil, note: String? = nil, by actor: String) -> MarkRequest {
        MarkRequest(request: CompletionCreate(alarmId: id, status: status, scheduledDate: at, note: note), actor: actor,
                    receivedAt: Date(), context: .topLevel)
    }

    func code(_ r: Result<CompletionRecorded, any Error>) -> ErrorCode? {
        if case .failure(let e as ServiceError) = r { return e.code }
        return nil
    }

    @Test("one batch: repeats get the first log, two marks of one alarm see each other, failures stay with their mark")
    func mixedBatch() async throws {
        try await withTestSuite(label: "marks", start: { try $0.startCore() }) { s in
            let (owner, list) = try await alarms(s, 4)
            let stranger = try await s.signup("Stranger")
            let (a, b, c, d) = (list[0], list[1], list[2], list[3])
            try await withBatch(s) { batch, db in
                let answers = await batch.record([
                    mark(a.id, by: owner.uid),                                   // A's pending occurrence
                    mark(a.id, at: a.due, by: owner.uid),                         // the same again
                    mark(a.id, by: owner.uid),                                    // A's next one, after the first mark
                    mark(b.id, "skipped", note: "away", by: owner.uid),
                    mark("no-such-alarm", by: owner.uid),
                    mark(c.id, at: c.due.addingTimeInterval(3600), by: owner.uid), // not an occurrence
                    mark(b.id, by: stranger.uid),                                 // not visible to them
                    mark(d.id, at: d.due.addingTimeInterval(Self.week), by: owner.uid), // after the pending one
                ])
                #expect(answers.count == 8)
                let first = try answers[0].get()
                #expect(first.created && first.completion.scheduledDate == a.due)
                #expect(first.alarm.nextFireDate == a.due.addingTimeInterval(Self.week))
                let again = try answers[1].get()
                #expect(!again.created && again.completion.id == first.completion.id)
                let next = try answers[2].get()
                #expect(next.created && next.completion.scheduledDate == a.due.addingTimeInterval(Self.week))
                #expect(next.alarm.nextFireDate == a.due.addingTimeInterval(2 * Self.week))
                #expect(next.alarm.version == first.alarm.version + 1)
                let skipped = try answers[3].get()
                #expect(skipped.created && skipped.completion.status == .skipped && skipped.completion.note == "away")
                #expect(skipped.alarm.lastCompletedDate == nil && skipped.completion.userDisplayName == "Owner")
                #expect(code(answers[4]) == .alarmNotFound)
                #expect(code(answers[5]) == .validationFailed)
                #expect(code(answers[6]) == .alarmNotFound)
                #expect(code(answers[7]) == .validationFailed)

                var logs: [(String, String, String?)] = []
                for try await r in try await db.query("SELECT alarm_id, status, note FROM completions").decode((String, String, String?).self) {
                    logs.append(r)
                }
                #expect(logs.count == 3)
                #expect(logs.filter { $0.0 == a.id }.count == 2)
                #expect(logs.contains { $0.0 == b.id && $0.1 == "skipped" && $0.2 == "away" })
                let completed = try await db.query("SELECT count(*)::int FROM outbox WHERE type = 'alarms.alarm-completed'").first(Int.self)
                let skips = try await db.query("SELECT count(*)::int FROM outbox WHERE type = 'alarms.alarm-skipped'").first(Int.self)
                #expect(completed == 2 && skips == 1)
                // A mark is one event carrying the alarm's new state: the only upserts are the 4 creations.
                let upserts = try await db.query("SELECT count(*)::int FROM outbox WHERE type = 'alarms.alarm-upserted'").first(Int.self)
                #expect(upserts == 4)
            }
            // What the API shows is what the batch answered, version included.
            let shown = try await s.request(.GET, "/v1/alarms/\(a.id)", token: owner.token)
            #expect(shown.json["nextFireDate"]?.stringValue.flatMap(ISOTime.parse) == a.due.addingTimeInterval(2 * Self.week))
            let untouched = try await s.request(.GET, "/v1/alarms/\(c.id)", token: owner.token)
            #expect(untouched.json["nextFireDate"]?.stringValue.flatMap(ISOTime.parse) == c.due)
        }
    }

    @Test("an occurrence marked outside the batch's foresight rolls the batch back; its marks are then made one by one")
    func markedMeanwhile() async throws {
        try await withTestSuite(label: "marks", start: { try $0.startCore() }) { s in
            let (owner, list) = try await alarms(s, 2)
            let (a, b) = (list[0], list[1])
            try await withBatch(s) { batch, db in
                // A log of A's occurrence after next, which the batch reaches only by its second mark of A.
                let later = a.due.addingTimeInterval(Self.week)
                try await db.query("""
                    INSERT INTO completions (id, alarm_id, user_id, status, scheduled_date, completed_at, on_time, created_at)
                    VALUES ('seeded', \(a.id), \(owner.uid), 'completed', \(later), now(), true, now())
                    """)
                let answers = await batch.record([mark(a.id, by: owner.uid), mark(b.id, by: owner.uid), mark(a.id, by: owner.uid)])
                let first = try answers[0].get(), other = try answers[1].get(), seeded = try answers[2].get()
                #expect(first.created && other.created)
                #expect(!seeded.created && seeded.completion.id == "seeded")
                let count = try await db.query("SELECT count(*)::int FROM completions").first(Int.self)
                #expect(count == 3)
                let events = try await db.query("SELECT count(*)::int FROM outbox WHERE type = 'alarms.alarm-completed'").first(Int.self)
                #expect(events == 2)
                // A statement PostgreSQL refuses is an error a mark could cause: the batch would go one by one.
                do {
                    _ = try await db.query("SELECT no_such_column FROM completions").first(Int.self)
                    Issue.record("the bad statement ran")
                } catch {
                    #expect(CompletionBatch.markCouldCause(error), "\(error)")
                }
            }
        }
    }

    @Test("only errors a mark could cause send a batch back one mark at a time; a lost database fails it at once")
    func whichErrorsRetryMarks() {
        #expect(CompletionBatch.markCouldCause(CompletionBatch.MarkedMeanwhile()))
        #expect(!CompletionBatch.markCouldCause(CancellationError()))
        #expect(!CompletionBatch.markCouldCause(TestSetupError("connection refused")))
    }

    @Test("concurrent marks over RPC: each answered, one log per occurrence, one version step per alarm")
    func concurrentMarks() async throws {
        try await withTestSuite(label: "marks", start: { try $0.startCore() }) { s in
            let (owner, list) = try await alarms(s, 30)
            let answers = try await withThrowingTaskGroup(of: CompletionRecorded.self) { group in
                for alarm in list {
                    for _ in 0..<2 {
                        group.addTask {
                            try await s.rpc(.alarms, AlarmsMethods.Complete.self,
                                            CompletionCreate(alarmId: alarm.id, status: "completed", scheduledDate: alarm.due), actor: owner.uid)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.count == 60)
            for alarm in list {
                let mine = answers.filter { $0.completion.alarmId == alarm.id }
                #expect(mine.count == 2 && mine.filter(\.created).count == 1)
                #expect(Set(mine.map(\.completion.id)).count == 1)
            }
            let (logs, versions) = try await s.inDatabase("alarms") { db in
                (try await db.query("SELECT count(*)::int FROM completions").first(Int.self),
                 try await db.query("SELECT DISTINCT version FROM alarms").all(Int32.self))
            }
            #expect(logs == 30)
            #expect(versions == [2])
        }
    }
}
