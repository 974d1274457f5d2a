import AlarmsCore
import Contracts
import Foundation
import Schedules
import Testing
import Wire

/// `FloatingTime` and the snooze and tier rules: pure, table-driven, without a database.
@Suite("Floating time and everyday rules (Domain)")
struct FloatingTimeRulesTests {
    /// A daily 07:00 floating alarm in `zone` whose pending occurrence is `pending`.
    static func daily(_ zone: String, pending: String, floating: Bool = true) -> Alarm {
        var a = AlarmPatchingTests.alarm()
        a.schedule = Schedule(type: "custom", intervalDays: 1, timeOfDay: "07:00", timezone: zone,
                              startDate: ISOTime.parse("2026-01-01T00:00:00Z")!, floating: floating)
        a.nextFireDate = ISOTime.parse(pending)
        return a
    }

    struct Move: Sendable, CustomTestStringConvertible {
        var from: String
        var to: String
        var pending: String
        var now: String
        var expected: String
        var testDescription: String { "\(from) → \(to), pending \(pending), now \(now) → \(expected)" }
    }

    @Test("a move keeps the pending occurrence's local date and time: no day skipped, none rung twice",
          arguments: [
              // Manila → New York (west, over the date line): Monday 07:00 Manila (Sunday 23:00
              // UTC) becomes Monday 07:00 New York (12:00 UTC), not Sunday 07:00 again.
              Move(from: "Asia/Manila", to: "America/New_York", pending: "2026-11-29T23:00:00Z", now: "2026-11-29T20:00:00Z",
                   expected: "2026-11-30T12:00:00Z"),
              // New York → Manila (east): Monday 07:00 New York has already passed in Manila when
              // the traveller lands there Monday noon: due at once, not skipped to Tuesday.
              Move(from: "America/New_York", to: "Asia/Manila", pending: "2026-11-30T12:00:00Z", now: "2026-11-30T04:00:00Z",
                   expected: "2026-11-29T23:00:00Z"),
              // Already rung (awaiting its mark): the instant stays.
              Move(from: "Asia/Manila", to: "America/New_York", pending: "2026-11-29T23:00:00Z", now: "2026-11-30T01:00:00Z",
                   expected: "2026-11-29T23:00:00Z"),
          ])
    func move(_ m: Move) throws {
        let moved = try FloatingTime.moved(Self.daily(m.from, pending: m.pending), to: m.to, now: try #require(ISOTime.parse(m.now)))
        #expect(moved.schedule.timezone == m.to)
        #expect(moved.nextFireDate == ISOTime.parse(m.expected), "\(moved.nextFireDate.map(ISOTime.format) ?? "nil")")
    }

    @Test("an unknown zone, or the alarm's own, changes nothing")
    func noMove() throws {
        let a = Self.daily("Asia/Manila", pending: "2026-11-29T23:00:00Z")
        #expect(try FloatingTime.moved(a, to: "Mars/Olympus", now: Date()) == a)
        #expect(try FloatingTime.moved(a, to: "Asia/Manila", now: Date()) == a)
    }

    @Test("snooze lengths: Free 10 and 60 (a day, a week or a custom length is Plus), Plus any of 1–10 080; the default falls to the tier's nearest")
    func snoozeLengths() throws {
        let free = TierStanding(tier: .free), plus = TierStanding(tier: .plus)
        #expect(try SnoozeRules.length(requested: nil, alarmDefault: 10, standing: free) == 10)
        #expect(try SnoozeRules.length(requested: nil, alarmDefault: 1440, standing: free) == 60)
        #expect(try SnoozeRules.length(requested: nil, alarmDefault: 20, standing: free) == 10)
        #expect(try SnoozeRules.length(requested: 45, alarmDefault: 60, standing: plus) == 45)
        for minutes in [1440, 45] {
            #expect(throws: ServiceError.self) { try SnoozeRules.length(requested: minutes, alarmDefault: 60, standing: free) }
        }
        for bad in [0, 10_081] {
            #expect(throws: ServiceError.self) { try SnoozeRules.length(requested: bad, alarmDefault: 60, standing: plus) }
        }
    }

    @Test("a refusal names a lapse (CA013) only when the lapsed tier gave what is asked; going back up forgets it")
    func lapses() throws {
        let lapsed = TierStanding.after(TierStanding(tier: .premium), new: .free, previous: .premium, reason: "expired", at: Date())
        #expect(lapsed.lapsedFrom == .premium)
        do { try lapsed.require(.plus, "notes need Plus"); Issue.record("not refused") } catch let e as ServiceError { #expect(e.code == .subscriptionExpired) }
        let downgraded = TierStanding.after(TierStanding(tier: .plus), new: .free, previous: .plus, reason: "purchase", at: Date())
        do { try downgraded.require(.plus, "notes need Plus"); Issue.record("not refused") } catch let e as ServiceError { #expect(e.code == .tierRequired) }
        let back = TierStanding.after(lapsed, new: .premium, previous: .free, reason: "purchase", at: Date())
        #expect(back.lapsedFrom == nil)
        let onHold = TierStanding.after(TierStanding(tier: .plus), new: .free, previous: .plus, reason: "billing_retry", at: Date())
        #expect(onHold.lapsedFrom == .plus)
    }

    @Test("completedAt: a device's time within the skew and the window; an old one is kept but not on time")
    func markTime() throws {
        let a = AlarmLifecycleTests.alarm()   // monthly, 1st 09:00 UTC, pending 2027-01-01
        let occurrence = try #require(ISOTime.parse("2027-01-01T09:00:00Z"))
        let received = try #require(ISOTime.parse("2027-01-05T09:00:00Z"))
        #expect(try AlarmLifecycle.markTime(nil, occurrence: occurrence, on: a, receivedAt: received) == received)
        let stated = occurrence.addingTimeInterval(600)
        #expect(try AlarmLifecycle.markTime(stated, occurrence: occurrence, on: a, receivedAt: received) == stated)
        #expect(throws: ServiceError.self) { try AlarmLifecycle.markTime(received.addingTimeInterval(301), occurrence: occurrence, on: a, receivedAt: received) }
        #expect(throws: ServiceError.self) {
            try AlarmLifecycle.markTime(ISOTime.parse("2026-11-30T09:00:00Z"), occurrence: occurrence, on: a, receivedAt: received)
        }
        // Four days offline: the stated time stands, on time it is not.
        #expect(!AlarmLifecycle.onTime(stated, occurrence: occurrence, window: 7200, receivedAt: received))
        #expect(AlarmLifecycle.onTime(stated, occurrence: occurrence, window: 7200, receivedAt: stated.addingTimeInterval(3600)))
    }
}
