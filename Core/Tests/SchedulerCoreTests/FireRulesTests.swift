import Foundation
import SchedulerCore
import Testing

/// The scheduler's fire decision without a database or a wheel: leads, overdue, the grace
/// window and what each fired timer announces, every kind against both sides of each bound.
@Suite("Fire rules (SchedulerCore)")
struct FireRulesTests {
    static let lead: Int64 = 10_000
    static let now: Int64 = 1_800_000_000_000

    @Test("missed checks fire at their instant; every kind that rings, an unknown one too, lead ahead",
          arguments: [(TimerKind.fire, lead), (.pre, lead), (.snooze, lead), (.missed, 0), (TimerKind("alarm.v9"), lead)])
    func leads(kind: TimerKind, expected: Int64) {
        #expect(FireRules.lead(of: kind, lead: Self.lead) == expected)
        #expect(FireRules.fireAt(due: Self.now, kind: kind, lead: Self.lead) == Self.now - expected)
    }

    @Test("the sweep takes a timer whose fire instant is more than the lag behind, not one at the lag")
    func overdue() {
        let lag: Int64 = 2_000
        // A fire due at now + lead - lag fires at now - lag: exactly at the lag, not overdue.
        #expect(!FireRules.isOverdue(due: Self.now + Self.lead - lag, kind: .fire, now: Self.now, lead: Self.lead, sweepLag: lag))
        #expect(FireRules.isOverdue(due: Self.now + Self.lead - lag - 1, kind: .fire, now: Self.now, lead: Self.lead, sweepLag: lag))
        // A missed check has no lead: due at now - lag is at the lag.
        #expect(!FireRules.isOverdue(due: Self.now - lag, kind: .missed, now: Self.now, lead: Self.lead, sweepLag: lag))
        #expect(FireRules.isOverdue(due: Self.now - lag - 1, kind: .missed, now: Self.now, lead: Self.lead, sweepLag: lag))
        // Not yet due at all.
        #expect(!FireRules.isOverdue(due: Self.now + 60_000, kind: .pre, now: Self.now, lead: Self.lead, sweepLag: lag))
    }

    @Test("past grace: anything that rings due before now - grace; a missed check never",
          arguments: [TimerKind.fire, .pre, .snooze, .missed, TimerKind("alarm.v9")])
    func grace(kind: TimerKind) {
        let grace: Int64 = 300_000
        #expect(!FireRules.isPastGrace(due: Self.now - grace, kind: kind, now: Self.now, grace: grace))
        #expect(FireRules.isPastGrace(due: Self.now - grace - 1, kind: kind, now: Self.now, grace: grace) == (kind != .missed))
        #expect(!FireRules.isPastGrace(due: Self.now + 1, kind: kind, now: Self.now, grace: grace))
    }

    struct OutcomeCase: Sendable, CustomTestStringConvertible {
        var kind: TimerKind
        var pastGrace: Bool
        var outcome: FireOutcome
        var testDescription: String { "\(kind)\(pastGrace ? " past grace" : "") → \(outcome)" }
    }

    @Test("what each fired timer announces", arguments: [
        OutcomeCase(kind: .fire, pastGrace: false, outcome: .fired),
        OutcomeCase(kind: .fire, pastGrace: true, outcome: .missed),
        OutcomeCase(kind: .snooze, pastGrace: false, outcome: .fired),
        OutcomeCase(kind: .snooze, pastGrace: true, outcome: .silent),
        OutcomeCase(kind: .pre, pastGrace: false, outcome: .preAlarm),
        OutcomeCase(kind: .pre, pastGrace: true, outcome: .silent),
        OutcomeCase(kind: .missed, pastGrace: false, outcome: .missed),
        OutcomeCase(kind: .missed, pastGrace: true, outcome: .missed),
        OutcomeCase(kind: TimerKind("alarm.v9"), pastGrace: false, outcome: .unknownKind(TimerKind("alarm.v9"))),
        OutcomeCase(kind: TimerKind("alarm.v9"), pastGrace: true, outcome: .unknownKind(TimerKind("alarm.v9"))),
    ])
    func outcomes(c: OutcomeCase) {
        #expect(FireOutcome.of(kind: c.kind, pastGrace: c.pastGrace) == c.outcome)
    }

    @Test("a kind read from the database keeps its word, known or not")
    func kinds() {
        #expect(TimerKind(rawValue: "fire") == .fire)
        #expect(TimerKind.known.allSatisfy { $0.isKnown })
        #expect(!TimerKind("Fire").isKnown)
        #expect(TimerKind("alarm.v9").rawValue == "alarm.v9")
    }
}
