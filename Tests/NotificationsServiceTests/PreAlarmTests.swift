import NotificationsCore
import Contracts
import Foundation
import Messaging
import PostgresNIO
import Support
@testable import SuiteSupport
import Testing

/// Pre-alarm warnings end to end: an alarm with a warning offset gets a `pre` timer at its
/// occurrence less the offset (`TimerStore.plannedTimers`); at that instant the scheduler
/// records it and publishes `scheduler.pre-alarm-due`, and notifications renders the warning
/// ("In 1 hour: …", `NotificationRenderer.preAlarm`) into the inbox and pushes it, not before.
extension NotificationsTests {
    /// Moves the alarm's pending warning timer (one) to `seconds` from now, as a new row the
    /// scheduler's loader picks up (as ``TestSuite/dueIn(_:seconds:)`` does for fire timers);
    /// returns that instant as the database stored it.
    func preAlarmDueIn(_ s: TestSuite, _ alarmId: String, seconds: Int) async throws -> Date {
        let moved = try await s.inDatabase("scheduler") { db in
            try await db.query("""
                WITH old AS (DELETE FROM timers WHERE alarm_id = \(alarmId) AND kind = 'pre' RETURNING *)
                INSERT INTO timers (partition, alarm_id, kind, occurrence_at, due_at, offset_minutes, snooze_count)
                SELECT partition, alarm_id, kind, occurrence_at, date_trunc('milliseconds', now()) + make_interval(secs => \(seconds)),
                    offset_minutes, snooze_count FROM old
                RETURNING due_at
                """).first(Date.self)
        }
        return try #require(moved, "the alarm has no warning timer to move")
    }

    @Test("a warning 1 h ahead is timed at the occurrence less 60 min, published as scheduler.pre-alarm-due and pushed at its instant")
    func preAlarmEndToEnd() async throws {
        try await withSuite { s, push in
            let u = try await s.signup("Renter")
            try await s.setTier(u, "plus")  // the 1 h warning is a Plus offset
            try await device(s, u, "hook", ["platform": "web", "webhookUrl": "\(push.baseURL)/hook/renter"])
            try await s.waitForDevices(u, count: 1)

            // Only the 1 h warning (the default 24 h one off).
            let created = try await s.request(.POST, "/v1/alarms", token: u.token, json: [
                "title": "Pay rent", "schedule": scheduleJSON("annual", day: 1),
                "preAlarmWarningEnabled": false, "preAlarmOffsets": ["1h"]])
            #expect(created.status == 201, "\(created.text)")
            let id = try #require(created.json["id"]?.stringValue, "\(created.text)")
            let occurrence = try #require(created.json["nextFireDate"]?.stringValue.flatMap(ISOTime.parse), "\(created.text)")

            // The scheduler planned the warning at the occurrence less 60 minutes.
            var planned: [(occurrence: Date, due: Date, offset: Int32)] = []
            let timed = await eventually(timeout: .seconds(10)) {
                planned = (try? await s.inDatabase("scheduler") { db in
                    var out: [(occurrence: Date, due: Date, offset: Int32)] = []
                    let rows = try await db.query("SELECT occurrence_at, due_at, offset_minutes FROM timers WHERE alarm_id = \(id) AND kind = 'pre'")
                    for try await (o, d, off) in rows.decode((Date, Date, Int32).self) { out.append((o, d, off)) }
                    return out
                }) ?? []
                return !planned.isEmpty
            }
            #expect(timed, "the scheduler has no warning timer for the alarm")
            let warning = try #require(planned.first)
            #expect(planned.count == 1, "\(planned)")
            #expect(warning.offset == 60)
            #expect(warning.occurrence == occurrence, "warning for \(warning.occurrence), alarm next at \(occurrence)")
            #expect(warning.due == occurrence.addingTimeInterval(-3600), "warning due \(warning.due) for the occurrence \(occurrence)")

            // Its instant brought close: it reaches the webhook at it, as a warning.
            let due = try await preAlarmDueIn(s, id, seconds: 3)
            func warnings() -> [FakePushServer.Received] {
                push.requests("webhook").filter { $0.json?["type"] as? String == "pre_alarm" }
            }
            #expect(await eventually(timeout: .seconds(20)) { !warnings().isEmpty }, "no warning was pushed")
            let hook = try #require(warnings().first)
            #expect(hook.status == 200, "the signature did not verify")
            #expect(hook.at >= due, "pushed at \(hook.at), before the warning's instant \(due)")
            #expect(hook.headers["x-chronir-event"] == "pre_alarm")
            #expect(hook.json?["title"] as? String == "Chronir")
            #expect(hook.json?["body"] as? String == "In 1 hour: Pay rent")
            #expect(hook.json?["urgent"] as? Bool == false, "a warning must not break through Do Not Disturb")
            let data = hook.json?["data"] as? [String: Any]
            #expect(data?["alarmId"] as? String == id)
            #expect(data?["offsetMinutes"] as? String == "60")
            #expect((data?["occurrenceAt"] as? String).flatMap(ISOTime.parse) == occurrence)

            // Recorded once as a warning; the alarm's own fire is still ahead, and was not pushed.
            let recorded = try await s.inDatabase("scheduler") { db in
                try await db.query("SELECT outcome FROM fires WHERE alarm_id = \(id) AND kind = 'pre' AND offset_minutes = 60").all(String.self)
            }
            #expect(recorded == ["fired"])
            let pendingFire = try await s.inDatabase("scheduler") { db in
                try await db.query("SELECT count(*)::int FROM timers WHERE alarm_id = \(id) AND kind = 'fire'").first(Int.self)
            }
            #expect(pendingFire == 1)
            #expect(push.requests("webhook").filter { ($0.json?["type"] as? String) == "alarm_fired" }.count == 0)

            // In the inbox, once.
            let inbox = try await s.request(.GET, "/v1/me/notifications", token: u.token)
            let items = try #require(inbox.json["notifications"]?.arrayValue, "\(inbox.text)")
            #expect(items.count == 1, "\(inbox.text)")
            #expect(items.first?["data"]?["type"]?.stringValue == "pre_alarm")
            #expect(items.first?["body"]?.stringValue == "In 1 hour: Pay rent")

            // The event on the way matches its schema in proto/events.
            let types = try await s.checkPublishedEvents(["scheduler", "notifications"])
            #expect(types.contains(SchedulerEvents.preAlarmDue.type), "\(types)")
        }
    }
}
