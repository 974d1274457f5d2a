import Foundation
import SchedulerCore
import Testing

/// Which timers an occurrence and a snooze need, which partition an alarm is in, and the words
/// of a warning: pure, with the instants passed in.
@Suite("Timer plan (SchedulerCore)")
struct TimerPlanTests {
    static let occurrence = Date(timeIntervalSince1970: 1_800_000_000)   // 2027-01-15T08:00:00Z

    @Test("an occurrence: the fire, the missed check one window later, the warnings still ahead")
    func occurrence() {
        let now = Self.occurrence.addingTimeInterval(-90 * 60)   // an hour and a half before
        let timers = TimerPlan.timers(occurrence: Self.occurrence, offsets: [1440, 60, 30], missedWindow: 3600, now: now)
        #expect(timers == [
            PlannedTimer(kind: .fire, due: Self.occurrence),
            PlannedTimer(kind: .missed, due: Self.occurrence.addingTimeInterval(3600)),
            PlannedTimer(kind: .pre, due: Self.occurrence.addingTimeInterval(-3600), offsetMinutes: 60),
            PlannedTimer(kind: .pre, due: Self.occurrence.addingTimeInterval(-1800), offsetMinutes: 30),
        ])
    }

    @Test("a warning exactly at now is not written (it is not ahead)")
    func warningAtNow() {
        let now = Self.occurrence.addingTimeInterval(-3600)
        let timers = TimerPlan.timers(occurrence: Self.occurrence, offsets: [60], missedWindow: 600, now: now)
        #expect(timers.map(\.kind) == [.fire, .missed])
    }

    @Test("an occurrence already past still gets its fire and missed check (the sweep decides how late)")
    func pastOccurrence() {
        let timers = TimerPlan.timers(occurrence: Self.occurrence, offsets: [5], missedWindow: 600, now: Self.occurrence.addingTimeInterval(60))
        #expect(timers.map(\.kind) == [.fire, .missed])
    }

    @Test("a snooze: the re-fire and the missed check one window after it")
    func snooze() {
        let refire = Self.occurrence.addingTimeInterval(600)
        #expect(TimerPlan.snoozed(refireAt: refire, missedWindow: 3600) == [
            PlannedTimer(kind: .snooze, due: refire), PlannedTimer(kind: .missed, due: refire.addingTimeInterval(3600)),
        ])
    }

    @Test("the group's missed window in minutes wins over the service's", arguments: [(Int?.none, 1800.0), (5, 300.0), (0, 0.0)])
    func missedWindow(group: Int?, expected: Double) {
        #expect(TimerPlan.missedWindow(groupMinutes: group, service: 1800) == expected)
    }

    @Test("partitions are FNV-1a 64 of the id: the same in every release (values computed apart)",
          arguments: [("dup-0", 256, 51), ("a", 256, 140), ("0193f1e2-7c4b-7000-8000-000000000001", 256, 104), ("", 16, 5), ("dup-0", 16, 3)])
    func partitions(id: String, partitions: Int, expected: Int) {
        #expect(Partitioning.partition(of: id, partitions: partitions) == expected)
    }

    @Test("every id lands inside the range")
    func partitionRange() {
        for i in 0..<2_000 {
            let p = Partitioning.partition(of: "alarm-\(i)", partitions: 7)
            #expect((0..<7).contains(p))
        }
    }

    @Test("the words of a warning", arguments: [
        (1440, "Tomorrow: Pay rent at 9:00 AM"), (2880, "In 2 days: Pay rent"), (60, "In 1 hour: Pay rent"),
        (180, "In 3 hours: Pay rent"), (45, "In 45 minutes: Pay rent"),
    ])
    func preAlarmText(offset: Int, expected: String) {
        // 08:00 UTC is 09:00 in Paris in January.
        #expect(PreAlarmText.text(title: "Pay rent", offsetMinutes: offset, occurrence: Self.occurrence, timezone: "Europe/Paris") == expected)
    }

    @Test("an unknown time zone reads the time in UTC")
    func preAlarmUnknownZone() {
        #expect(PreAlarmText.text(title: "X", offsetMinutes: 1440, occurrence: Self.occurrence, timezone: "Mars/Olympus") == "Tomorrow: X at 8:00 AM")
    }
}
