import Contracts
import Foundation
import LoadFixtures
import Messaging
import NotificationsService
import SchedulerService
import Support
import Testing

extension TestSuite {
    /// Moves the alarm's fire timer to `seconds` from now (a new row, which the wheel's loader
    /// picks up); returns that instant as the database stored it.
    func dueIn(_ alarmId: String, seconds: Int) async throws -> Date {
        try await awaitFireTimer(alarmId)
        return try await inDatabase("scheduler") { db in
            try await db.query("""
                WITH old AS (DELETE FROM timers WHERE alarm_id = \(alarmId) AND kind = 'fire' RETURNING *)
                INSERT INTO timers (partition, alarm_id, kind, occurrence_at, due_at, offset_minutes, snooze_count)
                SELECT partition, alarm_id, kind, occurrence_at, date_trunc('milliseconds', now()) + make_interval(secs => \(seconds)),
                    offset_minutes, snooze_count FROM old
                RETURNING due_at
                """).first(Date.self) ?? Date()
        }
    }

    /// Moves the fire timers of `alarmIds` to come due one every `every` seconds from `after`
    /// seconds on, in the order given (the first at `after` + `every`).
    func staggerFires(_ alarmIds: [String], after: Double, every: Double) async throws {
        try await inDatabase("scheduler") { db in
            try await db.query("""

                WITH old AS (DELETE FROM timers WHERE alarm_id = ANY(\(alarmIds)) AND kind = 'fire' RETURNING *)
                INSERT INTO timers (partition, alarm_id, kind, occurrence_at, due_at, offset_minutes, snooze_count)
                SELECT partition, alarm_id, kind, occurrence_at,
                    date_trunc('milliseconds', now()) + make_interval(secs => \(after) + \(every) * array_position(\(alarmIds)::text[], alarm_id)),
                    offset_minutes, snooze_count FROM old
                """)
        }
    }

    /// When the scheduler recorded the alarm's fire, once it has.
    func firedAt(_ alarmId: String) async throws -> Date? {
        try await inDatabase("scheduler") {
            try await $0.query("SELECT fired_at FROM fires WHERE alarm_id = \(alarmId) AND kind = 'fire'").first(Date.self)
        }
    }

    /// How many inbox rows `user` has (of `type` only, when given).
    func inboxCount(_ user: TestUser, type: String? = nil) async -> Int? {
        try? await inDatabase("notifications") {
            try await $0.query("SELECT count(*)::int FROM inbox WHERE user_id = \(user.uid) AND (\(type)::text IS NULL OR type = \(type))")
                .first(Int.self)
        }
    }
}

extension TestSuite {
    /// Starts the notifications service pointed at `push`, looking for due pushes every `poll`
    /// (default 50 ms) besides its wakes, with `extra` settings.
    func startNotifications(_ push: FakePushServer, poll: String? = nil, extra: [String: String] = [:]) throws {
        try start("notifications", migrations: NotificationsService.migrations,
                  extra: push.environment.merging(["CHRONIR_DELIVERY_POLL": poll ?? "50ms"]) { $1 }.merging(extra) { $1 },
                  build: NotificationsService.build)
    }

    /// Waits until notifications knows `count` devices of the user.
    func waitForDevices(_ u: TestUser, count: Int) async throws {
        let ok = await eventually(timeout: .seconds(10)) {
            let n = try? await inDatabase("notifications") {
                try await $0.query("SELECT count(*)::int FROM devices WHERE user_id = \(u.uid)").first(Int.self)
            }
            return n == count
        }
        if !ok { throw TestSetupError("notifications did not learn the devices") }
    }

    /// Waits until the scheduler holds the fire timer of `alarmId`'s pending occurrence.
    func awaitFireTimer(_ alarmId: String) async throws {
        let ok = await eventually(timeout: .seconds(10)) {
            let n = try? await inDatabase("scheduler") {
                try await $0.query("SELECT count(*)::int FROM timers WHERE alarm_id = \(alarmId) AND kind = 'fire'").first(Int.self)
            }
            return n == 1
        }
        if !ok { throw TestSetupError("the scheduler has no fire timer for \(alarmId)") }
    }

    /// Makes the pending occurrence of `alarmId` due now in the scheduler.
    func fireAgain(_ alarmId: String) async throws {
        try await awaitFireTimer(alarmId)
        try await inDatabase("scheduler") {
            try await $0.query("""
                WITH old AS (DELETE FROM timers WHERE alarm_id = \(alarmId) AND kind = 'fire' RETURNING *)
                INSERT INTO timers (partition, alarm_id, kind, occurrence_at, due_at, offset_minutes, snooze_count)
                SELECT partition, alarm_id, kind, occurrence_at, now(), offset_minutes, snooze_count FROM old
                """)
        }
    }
}
