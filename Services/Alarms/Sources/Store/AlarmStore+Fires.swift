import AlarmsCore
import Contracts
import Foundation
import Persistence
import PostgresNIO

/// The SQL of recording fires from the scheduler stream on alarms (`lastFiredDate`), in place:
/// no event follows, only the delta feed (``AlarmStore/bumpFeed(_:on:)``).
extension AlarmStore {
    /// Sets each alarm's `lastFiredDate` to its latest instant among `firedAt` (paired with
    /// `alarmIds`) where that is later than the one stored and the alarm is not deleted, bumping
    /// its version; returns the feed changes of the alarms that changed.
    func recordFires(alarmIds: [String], firedAt: [Date], on c: PostgresConnection) async throws -> [FeedChange] {
        let rows = try await c.query("""
            UPDATE alarms a SET last_fired_date = x.f, version = a.version + 1, updated_at = now()
            FROM (SELECT id, max(f) AS f FROM unnest(\(alarmIds)::text[], \(firedAt)::timestamptz[]) AS t(id, f)
                  GROUP BY id) x
            WHERE a.id = x.id AND a.deleted_at IS NULL AND (a.last_fired_date IS NULL OR a.last_fired_date < x.f)
            RETURNING a.id, a.owner_id, a.shared_with
            """, logger: logger)
        return try await Self.inPlaceChanges(rows)
    }

    /// Puts `alarmId`'s `lastFiredDate` back to `previousFiredAt` if it still shows the fire due
    /// at `dueAt` and the alarm is not deleted, bumping its version; returns the feed change when
    /// it changed.
    func withdrawFire(alarmId: String, dueAt: Date, previousFiredAt: Date?, on c: PostgresConnection) async throws -> [FeedChange] {
        let rows = try await c.query("""
            UPDATE alarms SET last_fired_date = \(previousFiredAt), version = version + 1, updated_at = now()
            WHERE id = \(alarmId) AND deleted_at IS NULL AND last_fired_date = \(dueAt)
            RETURNING id, owner_id, shared_with
            """, logger: logger)
        return try await Self.inPlaceChanges(rows)
    }

    /// The feed changes of alarms changed in place, from rows of (id, owner, shared_with): who
    /// sees each stays the same.
    private static func inPlaceChanges(_ rows: PostgresRowSequence) async throws -> [FeedChange] {
        var changes: [FeedChange] = []
        for try await (id, owner, shared) in rows.decode((String, String, [String]).self) {
            let members = Alarm.members(owner: owner, sharedWith: shared)
            changes.append(FeedChange(alarmId: id, before: members, after: members, deleted: false))
        }
        return changes
    }
}
