import Contracts
import Foundation
import Messaging
import PostgresNIO
import Schedules

/// Reading alarms out of rows.
enum AlarmRow {
    /// The columns every alarm query selects, in this order.
    static let columns = """
        id, owner_id, title, note, photo_url, photo_local_path, category, schedule::text, sound_id, vibration_enabled, \
        snooze_duration_minutes, pre_alarm_warning_enabled, pre_alarm_warning_hours, pre_alarm_offsets, require_dismiss_action, \
        is_active, is_paused, next_fire_date, last_fired_date, last_completed_date, shared_with, group_id, assigned_to, \
        created_at, updated_at, deleted_at, version, max_snooze_count, snoozed_until, snooze_count
        """

    /// Number of columns in ``columns``.
    static let count = 30

    static func decode(_ row: PostgresRow, offset: Int = 0) throws -> Alarm {
        let c = row.makeRandomAccess()
        func col<T: PostgresDecodable>(_ i: Int, _ t: T.Type) throws -> T { try c[offset + i].decode(T.self) }
        let schedule = try JSONCoding.decoder().decode(Schedule.self, from: Data(try col(7, String.self).utf8))
        let sharedWith = try col(20, [String].self)
        return Alarm(
            id: try col(0, String.self), ownerId: try col(1, String.self), title: try col(2, String.self),
            note: try col(3, String?.self), photoURL: try col(4, String?.self), photoLocalPath: try col(5, String?.self),
            category: try col(6, String?.self), schedule: schedule, soundId: try col(8, String.self),
            vibrationEnabled: try col(9, Bool.self), snoozeDurationMinutes: Int(try col(10, Int32.self)),
            preAlarmWarningEnabled: try col(11, Bool.self), preAlarmWarningHours: Int(try col(12, Int32.self)),
            preAlarmOffsets: try col(13, [String].self), requireDismissAction: try col(14, Bool.self),
            isActive: try col(15, Bool.self), isPaused: try col(16, Bool.self), nextFireDate: try col(17, Date?.self),
            lastFiredDate: try col(18, Date?.self), lastCompletedDate: try col(19, Date?.self),
            isShared: !sharedWith.isEmpty, sharedWith: sharedWith, groupId: try col(21, String?.self),
            assignedTo: try col(22, String?.self), createdAt: try col(23, Date.self), updatedAt: try col(24, Date.self),
            deletedAt: try col(25, Date?.self), version: Int(try col(26, Int32.self)),
            maxSnoozeCount: Int(try col(27, Int32.self)), snoozedUntil: try col(28, Date?.self), snoozeCount: Int(try col(29, Int32.self))
        )
    }

    static func decodeAll<Rows: AsyncSequence>(_ rows: Rows) async throws -> [Alarm] where Rows.Element == PostgresRow {
        var out: [Alarm] = []
        for try await row in rows { out.append(try decode(row)) }
        return out
    }
}

