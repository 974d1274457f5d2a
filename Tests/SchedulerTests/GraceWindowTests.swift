import Contracts
import Foundation
import Messaging
import PostgresNIO
import SchedulerService
import Support
@testable import SuiteSupport
import Testing

/// The fire grace window (`CHRONIR_FIRE_GRACE`): a scheduler taking over partitions fires the
/// overdue fires within the window at once, and records older ones as missed
/// (`FireEngine.takeOver` → `TimerStore.fire(…, missed:)`): outcome `missed`, the
/// `scheduler.occurrence-missed` event, and no ringing push. Real services, a local push server.
@Suite("Fire grace window")
struct GraceWindowTests {
    /// The scheduler's environment in these tests: a one-minute grace window.
    static let scheduler = ["CHRONIR_SCHEDULER_PARTITIONS": "16", "CHRONIR_FIRE_GRACE": "60s"]

    @Test("after a takeover, a fire overdue past the grace window is recorded missed and announced as missed, not rung; one within it fires")
    func overdueFiresPastGraceAreMissed() async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        try await withTestSuite(label: "grace", start: { s in
            try s.startCore()
            try s.start("scheduler", migrations: SchedulerService.migrations, extra: Self.scheduler, build: SchedulerService.build)
            try s.startNotifications(push)
        }) { s in
            let u = try await s.signup("Traveller")
            let hook = try await s.request(.PUT, "/v1/me/devices/hook", token: u.token,
                                           json: ["platform": "web", "webhookUrl": "\(push.baseURL)/hook/traveller"])
            #expect(hook.status == 200 || hook.status == 201, "\(hook.text)")
            try await s.waitForDevices(u, count: 1)
            var ids: [String] = []
            for title in ["Long overdue", "Just overdue"] {
                let r = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": title, "schedule": scheduleJSON("annual", day: 1)])
                ids.append(try #require(r.json["id"]?.stringValue, "\(r.text)"))
            }
            let (missed, late) = (ids[0], ids[1])
            for id in ids { try await s.awaitFireTimer(id) }

            // The scheduler goes away (a deploy, a crash); meanwhile one fire became 10 minutes
            // overdue (past the window) and another 2 s overdue (within it).
            let old = try #require(s.running.withLock { $0.first { $0.name == "scheduler" } })
            await old.stop()
            s.running.withLock { $0.removeAll { $0.name == "scheduler" } }
            let missedDue = try await s.dueIn(missed, seconds: -600)
            let lateDue = try await s.dueIn(late, seconds: -2)
            // Guard: both are still pending and nothing of them fired before the takeover.
            let before = try await s.inDatabase("scheduler") { db in
                try await db.query("""
                    SELECT (SELECT count(*) FROM timers WHERE kind = 'fire' AND alarm_id IN (\(missed), \(late)))::int * 10
                         + (SELECT count(*) FROM fires WHERE alarm_id IN (\(missed), \(late)))::int
                    """).first(Int.self)
            }
            #expect(before == 20, "expected 2 pending fire timers and no fire record before the takeover (got \(String(describing: before)))")

            // A scheduler starts and takes the partitions over.
            try s.start("scheduler", migrations: SchedulerService.migrations, extra: Self.scheduler, build: SchedulerService.build)

            func outcome(_ id: String) async -> String? {
                try? await s.inDatabase("scheduler") { db in
                    try await db.query("SELECT outcome FROM fires WHERE alarm_id = \(id) AND kind = 'fire'").first(String.self)
                }
            }
            let recorded = await eventually(timeout: .seconds(30)) {
                let m = await outcome(missed), l = await outcome(late)
                return m != nil && l != nil
            }
            #expect(recorded, "the takeover did not record both overdue fires")
            #expect(await outcome(missed) == "missed", "a fire \(Date().timeIntervalSince(missedDue)) s overdue, past a 60 s window")
            #expect(await outcome(late) == "fired", "a fire \(Date().timeIntervalSince(lateDue)) s overdue, within a 60 s window")

            // The events: the missed one is announced as missed, never as fired.
            let envelopes = try await s.inDatabase("scheduler") { db in
                try await db.query("SELECT envelope FROM outbox ORDER BY id").all(String.self)
            }
            let events = try envelopes.map { try Envelope.decode(Data($0.utf8)) }
            let missedEvents = try events.filter { $0.type == SchedulerEvents.occurrenceMissed.type }
                .map { try $0.decodePayload(SchedulerEvents.OccurrenceMissed.self) }
            let firedEvents = try events.filter { $0.type == SchedulerEvents.alarmFired.type }
                .map { try $0.decodePayload(SchedulerEvents.AlarmFired.self) }
            #expect(missedEvents.map(\.alarmId) == [missed], "occurrence-missed for \(missedEvents.map(\.alarmId))")
            #expect(firedEvents.map(\.alarmId) == [late], "alarm-fired for \(firedEvents.map(\.alarmId))")

            // The pushes: the missed occurrence as a (quiet) missed notice, the late one rung.
            func hooks(_ id: String) -> [String] {
                push.requests("webhook").filter { ($0.json?["data"] as? [String: Any])?["alarmId"] as? String == id }
                    .compactMap { $0.json?["type"] as? String }
            }
            #expect(await eventually(timeout: .seconds(20)) { hooks(missed) == ["alarm_missed"] && hooks(late) == ["alarm_fired"] },
                    "missed: \(hooks(missed)), late: \(hooks(late))")
            // The positive marker before asserting that no ring followed: notifications applied the
            // scheduler's whole stream and nothing is left to deliver.
            let drained = await eventually(timeout: .seconds(20)) {
                let left = try? await s.inDatabase("public") { db in
                    try await db.query("""
                        SELECT (SELECT coalesce(max(last_seq), 0) FROM scheduler.outbox_streams WHERE stream = 'scheduler')
                             - (SELECT coalesce(max(seq), 0) FROM notifications.consumer_checkpoints WHERE stream = 'scheduler')
                             + (SELECT count(*) FROM notifications.deliveries WHERE state = 'pending')
                        """).first(Int.self)
                }
                return left == 0
            }
            #expect(drained, "notifications did not catch up with the scheduler")
            #expect(hooks(missed) == ["alarm_missed"], "the missed occurrence rang: \(hooks(missed))")
            let missedPush = try #require(push.requests("webhook").first { ($0.json?["data"] as? [String: Any])?["alarmId"] as? String == missed })
            #expect(missedPush.json?["urgent"] as? Bool == false)
            #expect(missedPush.json?["title"] as? String == "Missed: Long overdue")

            // The alarms service logged the occurrence as missed and never saw it ring (the whole
            // history is Plus: a Free user sees the last completion only).
            try await s.setTier(u, "plus")
            #expect(await eventually(timeout: .seconds(20)) {
                let h = try? await s.request(.GET, "/v1/alarms/\(missed)/completions", token: u.token)
                return h?.json["completions"]?.arrayValue?.first?["status"]?.stringValue == "missed"
            }, "no missed log for the occurrence")
            let missedAlarm = try await s.request(.GET, "/v1/alarms/\(missed)", token: u.token)
            #expect(missedAlarm.json["lastFiredDate"]?.stringValue == nil, "\(missedAlarm.text)")
            #expect(await eventually(timeout: .seconds(20)) {
                (try? await s.request(.GET, "/v1/alarms/\(late)", token: u.token))?.json["lastFiredDate"]?.stringValue != nil
            })

            // Every event on the way matches its schema in proto/events.
            let types = try await s.checkPublishedEvents(["scheduler"])
            #expect(types.isSuperset(of: [SchedulerEvents.occurrenceMissed.type, SchedulerEvents.alarmFired.type]), "\(types)")
        }
    }
}
