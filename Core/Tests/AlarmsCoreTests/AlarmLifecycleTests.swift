import AlarmsCore
import Contracts
import Foundation
import Schedules
import Testing
import Wire

/// `AlarmLifecycle`: marks, advancing past an occurrence, soft deletion — pure transitions,
/// table-driven, without a database.
@Suite("Alarm lifecycle (Domain)")
struct AlarmLifecycleTests {
    /// A monthly alarm on the 1st at 09:00 UTC whose pending occurrence is 2027-01-01.
    static func alarm() -> Alarm {
        var a = AlarmPatchingTests.alarm()
        a.nextFireDate = ISOTime.parse("2027-01-01T09:00:00Z")
        return a
    }

    struct Mark: Sendable, CustomTestStringConvertible {
        var requested: String?
        var now: String
        /// The next occurrence after the mark ("none": it does not move on), or the error code.
        var expected: String
        var testDescription: String { "mark \(requested ?? "pending") at \(now) → \(expected)" }
    }

    @Test("a mark names an occurrence of the schedule, not after the pending one; the pending one (or later) moves the alarm on",
          arguments: [
              Mark(requested: nil, now: "2027-01-01T09:05:00Z", expected: "2027-02-01T09:00:00Z"),
              Mark(requested: "2027-01-01T09:00:00Z", now: "2027-01-01T08:59:00Z", expected: "2027-02-01T09:00:00Z"),
              Mark(requested: "2026-12-01T09:00:00Z", now: "2027-01-01T10:00:00Z", expected: "none"),
              Mark(requested: "2027-02-01T09:00:00Z", now: "2027-01-01T10:00:00Z", expected: "CA016"),
              Mark(requested: "2027-01-02T09:00:00Z", now: "2027-01-01T10:00:00Z", expected: "CA016"),
              // Marked late, after the next one would have been due: it moves past now.
              Mark(requested: nil, now: "2027-02-03T00:00:00Z", expected: "2027-03-01T09:00:00Z"),
          ])
    func mark(_ m: Mark) throws {
        let now = try #require(ISOTime.parse(m.now))
        do {
            let (_, next) = try AlarmLifecycle.markedOccurrence(m.requested.flatMap(ISOTime.parse), on: Self.alarm(), now: now)
            switch next {
            case .none: #expect(m.expected == "none")
            case .some(let date): #expect(date.map(ISOTime.format) == m.expected)
            }
        } catch let e as ServiceError {
            #expect(e.code.rawValue == m.expected, "\(e.message)")
        }
    }

    @Test("a completion sets lastCompletedDate, a skip does not; an ended schedule switches the alarm off; the version moves")
    func marked() throws {
        let at = try #require(ISOTime.parse("2027-01-01T09:05:00Z"))
        let a = Self.alarm()
        let done = AlarmLifecycle.marked(a, status: .completed, at: at, next: .some(ISOTime.parse("2027-02-01T09:00:00Z")))
        #expect(done.lastCompletedDate == at && done.isActive && done.version == a.version + 1 && done.updatedAt == at)
        let skipped = AlarmLifecycle.marked(a, status: .skipped, at: at, next: .some(nil))
        #expect(skipped.lastCompletedDate == nil && !skipped.isActive && skipped.nextFireDate == nil)
        let logged = AlarmLifecycle.marked(a, status: .completed, at: at, next: .none)
        #expect(logged.nextFireDate == a.nextFireDate, "an earlier occurrence only logs")
        #expect(AlarmLifecycle.onTime(at, occurrence: a.nextFireDate!, window: 3600))
        #expect(!AlarmLifecycle.onTime(at.addingTimeInterval(3600), occurrence: a.nextFireDate!, window: 1800))
    }

    @Test("advancing past the pending occurrence moves on (past now); an older one changes nothing; deletion switches off")
    func advanceAndDelete() throws {
        let a = Self.alarm()
        let pending = try #require(a.nextFireDate)
        let now = try #require(ISOTime.parse("2027-01-01T11:00:00Z"))
        #expect(try AlarmLifecycle.advanced(a, past: pending, now: now).nextFireDate == ISOTime.parse("2027-02-01T09:00:00Z"))
        #expect(try AlarmLifecycle.advanced(a, past: pending.addingTimeInterval(-31 * 86_400), now: now) == a)
        let late = try #require(ISOTime.parse("2027-03-05T00:00:00Z"))
        #expect(try AlarmLifecycle.advanced(a, past: pending, now: late).nextFireDate == ISOTime.parse("2027-04-01T09:00:00Z"))
        let deleted = AlarmLifecycle.deleted(a, at: now)
        #expect(deleted.deletedAt == now && !deleted.isActive)
    }
}
