import Contracts
import Foundation
import Persistence
import PostgresNIO

/// The SQL of snoozes: one row per snoozed occurrence, counting its consecutive snoozes.
extension AlarmStore {
    /// How many times `alarmId`'s occurrence at `occurrence` was snoozed (0: never).
    func snoozeCount(alarmId: String, occurrence: Date, on c: PostgresConnection) async throws -> Int {
        try await c.query("SELECT count FROM snoozes WHERE alarm_id = \(alarmId) AND occurrence_at = \(occurrence)",
                          logger: logger).first(Int32.self).map(Int.init) ?? 0
    }

    /// ``snoozeCount(alarmId:occurrence:on:)``, row-locking the occurrence's snooze row (when it
    /// has one) for the rest of the transaction.
    func lockSnoozeCount(alarmId: String, occurrence: Date, on c: PostgresConnection) async throws -> Int {
        try await c.query("""
            SELECT count FROM snoozes WHERE alarm_id = \(alarmId) AND occurrence_at = \(occurrence) FOR UPDATE
            """, logger: logger).first(Int32.self).map(Int.init) ?? 0
    }

    /// Counts one more snooze of `alarmId`'s occurrence at `occurrence`, by `user` at `now`,
    /// re-firing at `refireAt`.
    func recordSnooze(alarmId: String, occurrence: Date, refireAt: Date, at now: Date, by user: String,
                      on c: PostgresConnection) async throws {
        try await c.query("""
            INSERT INTO snoozes (alarm_id, occurrence_at, count, refire_at, updated_at, updated_by)
            VALUES (\(alarmId), \(occurrence), 1, \(refireAt), \(now), \(user))
            ON CONFLICT (alarm_id, occurrence_at) DO UPDATE
            SET count = snoozes.count + 1, refire_at = excluded.refire_at, updated_at = excluded.updated_at, updated_by = excluded.updated_by
            """, logger: logger)
    }
}
