@testable import AlarmsService
import Contracts
import Foundation
import Messaging
import Schedules
import Testing

/// Analytics reads the alarms stream through slim views (``AnalyticsViews``): they must read
/// the same values as the full events, from the bytes the alarms service writes.
@Suite("Analytics views of the alarms stream")
struct AnalyticsViewTests {
    static let state = AlarmsEvents.AlarmState(
        id: "a1", ownerId: "owner", title: "Change HVAC Filter",
        schedule: Schedule(type: "monthly", dayOfMonth: 31, monthlyType: "fixed", timeOfDay: "09:00", timezone: "Asia/Manila",
                           startDate: Date(timeIntervalSince1970: 1_760_000_000)),
        nextFireDate: Date(timeIntervalSince1970: 1_772_355_600), isActive: true, isPaused: false, deleted: false,
        preAlarmOffsetsMinutes: [1440, 60], members: ["owner", "member"], alertMembers: ["member"], groupId: "g1",
        assignedTo: "member", snoozeDurationMinutes: 10, version: 3)

    /// `payload` as the alarms service publishes it, read back through `view`.
    static func read<P: Encodable, V: Decodable>(_ payload: P, as view: V.Type) throws -> V {
        try Envelope.make(type: "alarms.test", payload: payload, source: "alarms/1").decodePayload(V.self)
    }

    @Test("an upsert, a deletion, a completion and a snooze read the same owner, schedule type, times and counts")
    func viewsReadTheEvents() throws {
        let upserted = try Self.read(Self.state, as: AnalyticsViews.Upserted.self)
        #expect(upserted == .init(ownerId: "owner", schedule: .init(type: "monthly"), members: ["owner", "member"], version: 3))
        #expect(try Self.read(Self.state, as: AnalyticsViews.AlarmKind.self) == .init(ownerId: "owner", schedule: .init(type: "monthly")))

        let marked = AlarmsEvents.OccurrenceMarked(
            alarm: Self.state, completionId: "c1", status: .completed, scheduledDate: Date(timeIntervalSince1970: 1_772_355_600),
            completedAt: Date(timeIntervalSince1970: 1_772_355_900.25), userId: "member", userDisplayName: "Mem")
        // Version 1 (an outbox an older build filled): the owner and type inside the state.
        let completed = try Self.read(marked, as: AnalyticsViews.CompletedV1.self).completed
        #expect(completed == .init(ownerId: "owner", scheduleType: "monthly", scheduledDate: marked.scheduledDate,
                                   completedAt: marked.completedAt, userId: "member"))
        var missed = marked
        missed.userId = nil
        #expect(try Self.read(missed, as: AnalyticsViews.CompletedV1.self).userId == nil)
        // Version 2: the same values from the slim payload.
        let slim = AlarmsEvents.OccurrenceCompleted(alarm: Self.state, completionId: "c1", scheduledDate: marked.scheduledDate,
                                                    completedAt: marked.completedAt, userId: "member", userDisplayName: "Mem")
        #expect(try Self.read(slim, as: AnalyticsViews.Completed.self) == completed)

        let snoozed = AlarmsEvents.Snoozed(alarm: Self.state, occurrenceAt: marked.scheduledDate,
                                           refireAt: Date(timeIntervalSince1970: 1_772_356_200), snoozeCount: 2, userId: "member")
        let view = try Self.read(snoozed, as: AnalyticsViews.Snoozed.self)
        #expect(view == .init(alarm: .init(ownerId: "owner", schedule: .init(type: "monthly")), refireAt: snoozed.refireAt,
                              snoozeCount: 2, userId: "member"))
    }

    @Test("a payload without a member the view needs is refused, naming it")
    func missingMember() throws {
        let error = #expect(throws: ServiceError.self) {
            _ = try Envelope(type: "alarms.test", source: "alarms/1", payload: Data(#"{"alarm":{"ownerId":"o"}}"#.utf8))
                .decodePayload(AnalyticsViews.CompletedV1.self)
        }
        #expect(error?.message.contains("alarm.schedule") == true, "\(String(describing: error))")
    }
}
