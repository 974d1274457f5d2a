import AlarmsCore
import Contracts
import Foundation
import Testing
import Wire

/// ``AlarmWrite``: every transition of an existing alarm writes one new version, stamped with
/// the write's time, and drops the snooze of an occurrence it moved past — or, for an edit,
/// a fire or a withdrawn fire that changes nothing, writes nothing.
@Suite("Alarm writes: one version per write")
struct AlarmWriteTests {
    static let t = ISOTime.parse("2027-01-01T09:30:00Z")!

    /// The pending occurrence 2027-01-01 09:00, snoozed once, version 7, fired at its instant.
    static func alarm() -> Alarm {
        var a = AlarmLifecycleTests.alarm()
        a.version = 7
        a.snoozedUntil = ISOTime.parse("2027-01-01T09:10:00Z")
        a.snoozeCount = 1
        a.lastFiredDate = ISOTime.parse("2027-01-01T09:00:00Z")
        return a
    }

    /// Each transition that writes, by name, with what it must answer.
    static let transitions: [(String, @Sendable (Alarm) throws -> Alarm?)] = [
        ("edit", { a in var n = a; n.title = "Water the plants"; return AlarmWrite.revised(n, from: a, at: t) }),
        ("completion", { a in AlarmLifecycle.marked(a, status: .completed, at: t, next: .some(ISOTime.parse("2027-02-01T09:00:00Z"))) }),
        ("skip of an older occurrence", { a in AlarmLifecycle.marked(a, status: .skipped, at: t, next: .none) }),
        ("snooze", { a in AlarmLifecycle.snoozed(a, until: t.addingTimeInterval(600), count: 2, at: t) }),
        ("missed window", { a in try AlarmLifecycle.missed(a, occurrence: a.nextFireDate!, now: t) }),
        ("fire", { a in AlarmLifecycle.fired(a, at: ISOTime.parse("2027-01-01T09:10:00Z")!, writtenAt: t) }),
        ("withdrawn fire", { a in AlarmLifecycle.fireWithdrawn(a, dueAt: a.lastFiredDate!, previous: nil, writtenAt: t) }),
    ]

    @Test("each write: version + 1, updatedAt the write's time; a move past the pending occurrence drops its snooze",
          arguments: transitions.indices)
    func oneVersion(index: Int) throws {
        let (name, transition) = Self.transitions[index]
        let before = Self.alarm()
        let after = try #require(try transition(before), "\(name) wrote nothing")
        #expect(after.version == before.version + 1, "\(name)")
        #expect(after.updatedAt == Self.t, "\(name)")
        if after.nextFireDate != before.nextFireDate {
            #expect(after.snoozedUntil == nil && after.snoozeCount == 0, "\(name) kept the snooze of an occurrence it left")
        } else if name != "snooze" {
            #expect(after.snoozeCount == before.snoozeCount, "\(name)")
        }
    }

    @Test("writes that change nothing write nothing: an edit to the same value, an older or equal fire, a fire of a deleted alarm, a withdrawal of a fire it no longer shows")
    func nothing() {
        let a = Self.alarm()
        var same = a
        same.title = a.title
        #expect(AlarmWrite.revised(same, from: a, at: Self.t) == nil)
        #expect(AlarmLifecycle.fired(a, at: a.lastFiredDate!, writtenAt: Self.t) == nil)
        #expect(AlarmLifecycle.fired(a, at: a.lastFiredDate!.addingTimeInterval(-60), writtenAt: Self.t) == nil)
        var deleted = a
        deleted.deletedAt = Self.t
        #expect(AlarmLifecycle.fired(deleted, at: Self.t, writtenAt: Self.t) == nil)
        #expect(AlarmLifecycle.fireWithdrawn(a, dueAt: a.lastFiredDate!.addingTimeInterval(60), previous: nil, writtenAt: Self.t) == nil)
        #expect(AlarmLifecycle.fireWithdrawn(deleted, dueAt: a.lastFiredDate!, previous: nil, writtenAt: Self.t) == nil)
    }

    @Test("a chain of writes counts one version each, whatever their order")
    func chain() throws {
        var a = Self.alarm()
        let start = a.version
        for (name, transition) in Self.transitions {
            if let n = try transition(a) { a = n } else { Issue.record("\(name) wrote nothing in the chain") }
        }
        #expect(a.version == start + Self.transitions.count, "\(a.version - start) versions for \(Self.transitions.count) writes")
    }

    /// A date as PostgreSQL gives it back: whole microseconds since 2000-01-01, cut (what
    /// PostgresNIO's `Date` encoding does).
    static func throughPostgres(_ d: Date) -> Date {
        let micros = Int64(d.timeIntervalSince(Date(timeIntervalSince1970: 946_684_800)) * 1_000_000)
        return Date(timeIntervalSince1970: 946_684_800 + Double(micros) / 1_000_000)
    }

    @Test("a fire's instant read back from the row is the event's instant: a repeat writes nothing, a withdrawal applies (1 000 millisecond instants)")
    func instantsThroughPostgres() throws {
        var unequal = 0
        for ms in stride(from: Int64(1_800_000_000_001), to: 1_800_000_001_000, by: 1) {
            let due = Date(timeIntervalSince1970: Double(ms) / 1000)   // as an event decodes it
            var a = Self.alarm()
            a.lastFiredDate = Self.throughPostgres(due)                 // as the row reads it
            if a.lastFiredDate != due { unequal += 1 }
            #expect(AlarmLifecycle.fired(a, at: due, writtenAt: Self.t) == nil, "a repeat of the fire at \(ms) ms wrote")
            #expect(AlarmLifecycle.fireWithdrawn(a, dueAt: due, previous: nil, writtenAt: Self.t) != nil, "the withdrawal at \(ms) ms missed")
            #expect(AlarmLifecycle.fired(a, at: due.addingTimeInterval(0.001), writtenAt: Self.t) != nil, "a fire a millisecond later did not")
        }
        #expect(unequal > 0, "the round trip through PostgreSQL's microseconds changed no instant: the test shows nothing")
    }
}
