import Foundation
@testable import chronirctl
import Testing

/// The load run's audit (issue 76): expectations from the alarms the suite holds, each client's
/// stream against its own inbox. Each case breaks one thing and checks the audit says so.
@Suite("chronirctl load audit")
struct LoadAuditTests {
    static let due = Date(timeIntervalSince1970: 1_800_000_000)
    static let members = ["owner", "m1", "m2"]

    /// A group alarm fired to three members and completed by m1, and a personal alarm of m2's,
    /// each row in its recipient's inbox and on its stream once.
    static func clean() -> (alarms: [LoadAudit.AlarmFacts], inbox: [String: [LoadAudit.Row]], received: [String: [LoadAudit.Row]]) {
        let alarms: [LoadAudit.AlarmFacts] = [
            .init(id: "g", members: members, due: due, completed: true, completer: "m1"),
            .init(id: "p", members: ["m2"], due: due.addingTimeInterval(60), completed: false),
        ]
        var inbox: [String: [LoadAudit.Row]] = [:]
        var id: Int64 = 10
        func add(_ user: String, _ type: String, _ alarm: String, _ at: Date, by: String? = nil) {
            id += 1
            inbox[user, default: []].append(.init(id: id, user: user, type: type, alarm: alarm, occurrence: at, completedBy: by))
        }
        for m in members { add(m, "alarm_fired", "g", due) }
        add("m2", "alarm_fired", "p", due.addingTimeInterval(60))
        for m in members where m != "m1" { add(m, "alarm_completed", "g", due, by: "m1") }
        // Every row received once, plus a silent change that the inbox does not list.
        var received = inbox
        received["owner", default: []].insert(.init(id: 5, user: "owner", type: "alarm_changed"), at: 0)
        return (alarms, inbox, received)
    }

    @Test("a group alarm without a member of its group is a problem, though every push it called for came (the audit's expectations are the suite's own)")
    func groupMemberMissing() {
        var (a, i, r) = Self.clean()
        a[0].groupMembers = Set(Self.members)
        #expect(LoadAudit.compute(alarms: a, inbox: i, received: r, planned: ["g", "p"]).problems.isEmpty)
        a[0].groupMembers = Set(Self.members + ["m3"])
        let result = LoadAudit.compute(alarms: a, inbox: i, received: r, planned: ["g", "p"])
        #expect(result.fire.lost == 0 && result.groupAlarmsShort == 1 && result.groupMembersMissing == 1)
        #expect(result.problems == ["1 group alarms lack members of their group (1 member-alarm pairs)"], "\(result.problems)")
    }

    @Test("a clean run: every expected push in its inbox and received once; no problem")
    func clean() {
        let (a, i, r) = Self.clean()
        let result = LoadAudit.compute(alarms: a, inbox: i, received: r, planned: ["g", "p"])
        #expect(result.fire == LoadAudit.Kind(expected: 4, inInbox: 4, received: 4))
        #expect(result.completion == LoadAudit.Kind(expected: 2, inInbox: 2, received: 2))
        #expect(result.problems.isEmpty, "\(result.problems)")
        #expect(result.byMinute.map(\.expected) == [3, 1])
    }

    @Test("a fire in the inbox that never reached the stream is lost on the stream, in its minute")
    func lostOnStream() {
        let c = Self.clean()
        let a = c.alarms
        let i = c.inbox
        var r = c.received
        r["m1"]!.removeAll { $0.type == "alarm_fired" }
        let result = LoadAudit.compute(alarms: a, inbox: i, received: r, planned: ["g", "p"])
        #expect(result.fire.lost == 1 && result.fire.lostOnStream == 1 && result.fire.notInInbox == 0)
        #expect(result.byMinute.first?.lost == 1)
        #expect(!result.problems.isEmpty)
    }

    @Test("a member with no fire row is lost before the inbox")
    func notInInbox() {
        let c = Self.clean()
        let a = c.alarms
        var i = c.inbox
        var r = c.received
        i["m2"]!.removeAll { $0.alarm == "p" }
        r["m2"]!.removeAll { $0.alarm == "p" }
        let result = LoadAudit.compute(alarms: a, inbox: i, received: r, planned: ["g", "p"])
        #expect(result.fire.notInInbox == 1 && result.fire.lost == 1)
    }

    @Test("a frame received twice is a duplicate; repeats are not dropped before they are counted")
    func duplicate() {
        let c = Self.clean()
        let a = c.alarms
        let i = c.inbox
        var r = c.received
        r["owner"]!.append(r["owner"]!.first { $0.type == "alarm_fired" }!)
        let result = LoadAudit.compute(alarms: a, inbox: i, received: r, planned: ["g", "p"])
        #expect(result.fire.duplicated == 1)
        #expect(result.problems.contains { $0.contains("duplicated") })
    }

    @Test("another user's frame on a client's stream is misrouted, even when the count still adds up")
    func misrouted() {
        let c = Self.clean()
        let a = c.alarms
        let i = c.inbox
        var r = c.received
        // m1 loses its fire and receives m2's instead: the totals match, the audit does not.
        let theirs = r["m2"]!.first { $0.type == "alarm_fired" && $0.alarm == "g" }!
        r["m1"]!.removeAll { $0.type == "alarm_fired" }
        r["m1"]!.append(theirs)
        let result = LoadAudit.compute(alarms: a, inbox: i, received: r, planned: ["g", "p"])
        #expect(result.misrouted == 1)
        #expect(result.fire.lost == 1)
    }

    @Test("expectations follow the members when the alarm fired, not the creation answer; a completion row to the completer is unexpected")
    func membersAtFireTime() {
        let c = Self.clean()
        let a = c.alarms
        var i = c.inbox
        var r = c.received
        // The generator heard only the owner at creation; the suite shared it with all three.
        let result = LoadAudit.compute(alarms: a, inbox: i, received: r, planned: ["g", "p"])
        #expect(result.fire.expected == 4)
        let row = LoadAudit.Row(id: 99, user: "m1", type: "alarm_completed", alarm: "g", occurrence: Self.due, completedBy: "m1")
        i["m1"]!.append(row)
        r["m1"]!.append(row)
        let extra = LoadAudit.compute(alarms: a, inbox: i, received: r, planned: ["g", "p"])
        #expect(extra.completion.unexpected == 1)
        #expect(!extra.problems.isEmpty)
    }

    @Test("an alarm accepted but never heard accepted still counts; one heard but not held is reported")
    func acceptedVersusPlanned() {
        let (a, i, r) = Self.clean()
        let result = LoadAudit.compute(alarms: a, inbox: i, received: r, planned: ["g", "x"])
        #expect(result.acceptedNotPlanned == 1 && result.plannedNotAccepted == 1)
        #expect(result.fire.expected == 4)
    }

    @Test("a frame written after its client's inbox was read is not called misrouted; one at or below the read is")
    func afterTheRead() {
        let c = Self.clean()
        var r = c.received
        r["owner"]!.append(.init(id: 5_000, user: "owner", type: "alarm_missed", alarm: "g", occurrence: Self.due))
        #expect(LoadAudit.compute(alarms: c.alarms, inbox: c.inbox, received: r, planned: ["g", "p"]).misrouted == 0)
        r["owner"]!.append(.init(id: 12, user: "owner", type: "alarm_missed", alarm: "g", occurrence: Self.due))
        #expect(LoadAudit.compute(alarms: c.alarms, inbox: c.inbox, received: r, planned: ["g", "p"]).misrouted == 1)
    }

    @Test("any frame repeated on a client's stream counts, silent ones included")
    func repeatedSilent() {
        let c = Self.clean()
        var r = c.received
        r["owner"]!.append(.init(id: 5, user: "owner", type: "alarm_changed"))
        let result = LoadAudit.compute(alarms: c.alarms, inbox: c.inbox, received: r, planned: ["g", "p"])
        #expect(result.repeatedFrames == 1)
        #expect(result.fire.duplicated == 0)
        #expect(result.problems.contains { $0.contains("more than once") })
    }

    @Test("a frame that arrives after a larger id is out of order, even when every push arrived once")
    func outOfOrder() {
        let c = Self.clean()
        var r = c.received
        r["m2"]!.swapAt(1, 2)
        let result = LoadAudit.compute(alarms: c.alarms, inbox: c.inbox, received: r, planned: ["g", "p"])
        #expect(result.fire.lost == 0 && result.fire.duplicated == 0)
        #expect(result.outOfOrderFrames == 1)
        #expect(result.problems.contains { $0.contains("after a larger id") })
    }

    @Test("an inbox row of another type (not a fire or completion of the run) that never reached the stream is reported")
    func otherRowNotOnStream() {
        let c = Self.clean()
        var i = c.inbox
        i["m1"]!.append(.init(id: 40, user: "m1", type: "group_member_joined"))
        let result = LoadAudit.compute(alarms: c.alarms, inbox: i, received: c.received, planned: ["g", "p"])
        #expect(result.otherRowsNotOnStream == 1)
        #expect(!result.problems.isEmpty)
        var r = c.received
        r["m1"]!.append(.init(id: 40, user: "m1", type: "group_member_joined"))
        #expect(LoadAudit.compute(alarms: c.alarms, inbox: i, received: r, planned: ["g", "p"]).problems.isEmpty)
    }

    @Test("an alarm answered 201 that the suite does not hold breaks the run")
    func acceptedThenLost() {
        let (a, i, r) = Self.clean()
        let result = LoadAudit.compute(alarms: a, inbox: i, received: r, planned: ["g", "p", "x"])
        #expect(result.problems.contains { $0.contains("does not hold") })
    }

    @Test("the same seed plans the same run; another seed another")
    func seededPlan() {
        func minutes(_ seed: UInt64) -> [Int] {
            var rng = SeededGenerator(seed: seed)
            return LoadPlan(users: 40, alarms: 200, groupShare: 0.25, groupSize: 5, minutes: 6, spike: 60, spikeMinute: 3, using: &rng)
                .alarms.map { $0.owner * 10 + $0.minute }
        }
        #expect(minutes(7) == minutes(7))
        #expect(minutes(7) != minutes(8))
        var a = SeededGenerator(seed: 7, item: 3, stream: 1), b = SeededGenerator(seed: 7, item: 3, stream: 1), c = SeededGenerator(seed: 7, item: 4, stream: 1)
        #expect(a.next() == b.next())
        var d = SeededGenerator(seed: 7, item: 3, stream: 1)
        #expect(d.next() != c.next())
    }
}
