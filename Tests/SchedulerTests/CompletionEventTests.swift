import Contracts
import Foundation
import Logging
import Messaging
import Outbox
import Persistence
import PostgresNIO
import ServiceKit
import Support
import Testing
@testable import SchedulerService

/// `alarms.alarm-completed` version 2 carries only what the scheduler reads of a completion;
/// version 1 (an outbox an older alarms build filled) carried the whole state. Applied through
/// the scheduler's own handler on a real PostgreSQL, both must move the alarm to its next
/// occurrence, keep what the completion does not carry, and tell the other members.
@Suite("Completion events, versions 1 and 2")
struct CompletionEventTests {
    let t1 = Date(timeIntervalSince1970: 4_000_000_000)
    var t2: Date { t1.addingTimeInterval(86_400) }
    var t3: Date { t1.addingTimeInterval(2 * 86_400) }

    struct Fixture {
        let db: Database
        let handlers: AlarmsEventHandlers
        let outbox: OutboxWriter
        var seq: Int64 = 0

        /// Applies `envelopes` as one run, as the consumer would.
        mutating func apply(_ envelopes: [Envelope]) async throws {
            var run: [EventContext] = []
            for e in envelopes {
                seq += 1
                // Through the bytes, as the consumer receives them.
                let wire = try Envelope.decode(e.encoded())
                run.append(EventContext(event: DeliveredEvent(seq: seq, envelope: wire), logger: Logger(label: "test")))
            }
            let handlers = self.handlers
            try await db.transaction { [run] c in try await handlers.applyRun(run, on: c) }
        }

        func row(_ id: String) async throws -> (version: Int, next: Date?, active: Bool, title: String, members: [String])? {
            let rows = try await db.query("SELECT version, next_fire_date, active, title, members FROM alarms WHERE alarm_id = \(id)")
            for try await r in rows.decode((Int32, Date?, Bool, String, [String]).self) { return (Int(r.0), r.1, r.2, r.3, r.4) }
            return nil
        }

        func timers(_ id: String) async throws -> [String] {
            try await db.query("""
                SELECT kind || '@' || extract(epoch FROM occurrence_at)::bigint || '+' || offset_minutes FROM timers
                WHERE alarm_id = \(id) ORDER BY kind, occurrence_at, offset_minutes
                """).all(String.self)
        }

        func pushes() async throws -> [String] {
            try await db.query("""
                SELECT (envelope::jsonb)->'payload'->>'recipient' || ':' || ((envelope::jsonb)->'payload'->>'title') FROM outbox
                WHERE type = 'scheduler.completion-push' ORDER BY id
                """).all(String.self)
        }
    }

    func withFixture(_ label: String, _ body: (inout Fixture) async throws -> Void) async throws {
        let url = try await TestDatabase.create(label)
        try await withDatabase(url: url, schema: "scheduler") { db in
            _ = try await Migrator(database: db).migrate(SchedulerMigrations.all)
            let config = try SchedulerConfig(environment: ServiceEnvironment([:]))
            let outbox = OutboxWriter(stream: "scheduler", source: "tests/1", telemetry: .discarding(), database: db, relay: nil)
            let store = TimerStore(database: db, config: config, outbox: outbox, instance: "tests-1")
            let engine = FireEngine(store: store, config: config, telemetry: .discarding())
            var f = Fixture(db: db, handlers: AlarmsEventHandlers(store: store, outbox: outbox, engine: engine), outbox: outbox)
            try await body(&f)
        }
    }

    /// A shared alarm due at `next` with a one-hour warning.
    func state(_ id: String, next: Date?, version: Int, title: String = "Water the plants") -> AlarmsEvents.AlarmState {
        var s = alarmState(id, at: t1, version: version, members: ["owner", "member"])
        s.title = title
        s.nextFireDate = next
        s.isActive = next != nil
        s.preAlarmOffsetsMinutes = [60]
        return s
    }

    func completed(_ s: AlarmsEvents.AlarmState, occurrence: Date) -> AlarmsEvents.OccurrenceCompleted {
        AlarmsEvents.OccurrenceCompleted(alarm: s, completionId: "c-\(s.version)", scheduledDate: occurrence,
                                         completedAt: occurrence.addingTimeInterval(30), userId: "member", userDisplayName: "Mem")
    }

    func timersAt(_ d: Date) -> [String] {
        let e = Int(d.timeIntervalSince1970)
        return ["fire@\(e)+0", "missed@\(e)+0", "pre@\(e)+60"].sorted()
    }

    func expectTimers(_ f: Fixture, _ id: String, at d: Date, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let got = try await f.timers(id)
        #expect(got == timersAt(d), "timers \(got)", sourceLocation: sourceLocation)
    }

    @Test("a version-2 completion moves the alarm on in place, keeps its title and members, and pushes to the other member")
    func slim() async throws {
        try await withFixture("completion-v2") { f in
            let s1 = state("a1", next: t1, version: 1)
            try await f.apply([try f.outbox.envelope(AlarmsEvents.alarmUpserted, s1, actor: "owner")])
            try await expectTimers(f, "a1", at: t1)

            let done = completed(state("a1", next: t2, version: 2), occurrence: t1)
            let slimEnvelope = try f.outbox.envelope(AlarmsEvents.alarmCompleted, done, actor: "member")
            #expect(slimEnvelope.version == 2)
            #expect(slimEnvelope.payload.count < 600, "the slim payload is \(slimEnvelope.payload.count) bytes")
            try await f.apply([slimEnvelope])
            let row = try #require(try await f.row("a1"))
            #expect(row.version == 2 && row.next == t2 && row.active)
            #expect(row.title == "Water the plants" && row.members == ["owner", "member"], "a completion keeps what it does not carry")
            try await expectTimers(f, "a1", at: t2)
            #expect(try await f.pushes() == ["owner:Water the plants"])

            // An older completion of the same alarm (a repeat at a lower version) changes nothing.
            try await f.apply([try f.outbox.envelope(AlarmsEvents.alarmCompleted, completed(state("a1", next: t3, version: 2), occurrence: t1),
                                                     actor: "member")])
            #expect(try await f.row("a1")?.next == t2)

            // The last occurrence: no next one, the alarm goes off and its timers go.
            try await f.apply([try f.outbox.envelope(AlarmsEvents.alarmCompleted, completed(state("a1", next: nil, version: 3), occurrence: t2),
                                                     actor: "member")])
            let ended = try #require(try await f.row("a1"))
            #expect(ended.version == 3 && ended.next == nil && !ended.active)
            #expect(try await f.timers("a1") == [])

            // An alarm this read model never held is left alone (nothing to apply the change to).
            try await f.apply([try f.outbox.envelope(AlarmsEvents.alarmCompleted, completed(state("nowhere", next: t2, version: 5), occurrence: t1),
                                                     actor: "member")])
            #expect(try await f.row("nowhere") == nil)
            #expect(try await f.timers("nowhere") == [])
        }
    }

    @Test("a version-1 completion (whole state) is still applied, and pushes the same")
    func whole() async throws {
        try await withFixture("completion-v1") { f in
            try await f.apply([try f.outbox.envelope(AlarmsEvents.alarmUpserted, state("a1", next: t1, version: 1), actor: "owner")])
            let marked = AlarmsEvents.OccurrenceMarked(
                alarm: state("a1", next: t2, version: 2, title: "Renamed"), completionId: "c1", status: .completed,
                scheduledDate: t1, completedAt: t1.addingTimeInterval(30), userId: "member", userDisplayName: "Mem")
            let v1 = try f.outbox.envelope(TypedEvent<AlarmsEvents.OccurrenceMarked>(AlarmsEvents.alarmCompleted.type), marked, actor: "member")
            #expect(v1.version == 1)
            try await f.apply([v1])
            let row = try #require(try await f.row("a1"))
            #expect(row.version == 2 && row.next == t2 && row.title == "Renamed")
            try await expectTimers(f, "a1", at: t2)
            #expect(try await f.pushes() == ["owner:Renamed"])
        }
    }

    @Test("in one run a completion after a whole state adds to it; a newer whole state after a completion wins")
    func mixedRuns() async throws {
        try await withFixture("completion-mixed") { f in
            // Created and completed in one run: the row is written whole, with the completion's next occurrence.
            try await f.apply([try f.outbox.envelope(AlarmsEvents.alarmUpserted, state("a1", next: t1, version: 1), actor: "owner"),
                               try f.outbox.envelope(AlarmsEvents.alarmCompleted, completed(state("a1", next: t2, version: 2), occurrence: t1),
                                                     actor: "member")])
            let first = try #require(try await f.row("a1"))
            #expect(first.version == 2 && first.next == t2 && first.title == "Water the plants")
            try await expectTimers(f, "a1", at: t2)

            // Completed, then paused by the owner, in one run: the pause (newer, whole) wins.
            var paused = state("a1", next: t3, version: 4, title: "Paused")
            paused.isPaused = true
            try await f.apply([try f.outbox.envelope(AlarmsEvents.alarmCompleted, completed(state("a1", next: t3, version: 3), occurrence: t2),
                                                     actor: "member"),
                               try f.outbox.envelope(AlarmsEvents.alarmUpserted, paused, actor: "owner")])
            let second = try #require(try await f.row("a1"))
            #expect(second.version == 4 && !second.active && second.title == "Paused")
            #expect(try await f.timers("a1") == [])
            #expect(try await f.pushes().count == 2, "each completion pushes once")
        }
    }
}
