import AlarmsCore
import Contracts
import Foundation
import Persistence
import PostgresNIO

/// The SQL of recording fires from the scheduler stream on alarms (`lastFiredDate`): the rows
/// locked, the rule decided in AlarmsCore (``AlarmLifecycle/fired(_:at:writtenAt:)``,
/// ``AlarmLifecycle/fireWithdrawn(_:dueAt:previous:writtenAt:)``, each through ``AlarmWrite``),
/// then written in place, a batch in one statement. No event follows, only the delta feed
/// (``AlarmStore/bumpFeed(_:on:)``).
extension AlarmStore {
    /// Locks the alarms `ids` that are not deleted (in id order, so two batches cannot wait on
    /// each other) and reads them: a deleted alarm takes no fire, and is not locked for one.
    func lockAll(_ ids: [String], on c: PostgresConnection) async throws -> [Alarm] {
        guard !ids.isEmpty else { return [] }
        let rows = try await c.prepared("""
            SELECT \(unescaped: AlarmRow.columns) FROM alarms WHERE id = ANY(\(ids)::text[]) AND deleted_at IS NULL
            ORDER BY id FOR UPDATE
            """, logger: logger)
        return try await AlarmRow.decodeAll(rows)
    }

    /// Writes the `lastFiredDate`, version and `updatedAt` of `alarms` (each as the fire's rule
    /// answered it), and returns their feed changes: who sees each stays the same.
    func writeFires(_ alarms: [Alarm], on c: PostgresConnection) async throws -> [FeedChange] {
        guard !alarms.isEmpty else { return [] }
        let never = Date(timeIntervalSince1970: 0)
        try await c.query("""
            UPDATE alarms a SET last_fired_date = CASE WHEN u.has_fired THEN u.fired END, version = u.version, updated_at = u.updated
            FROM unnest(\(alarms.map(\.id))::text[], \(alarms.map { $0.lastFiredDate ?? never })::timestamptz[],
                        \(alarms.map { $0.lastFiredDate != nil })::boolean[], \(alarms.map { Int32($0.version) })::integer[],
                        \(alarms.map(\.updatedAt))::timestamptz[]) AS u(id, fired, has_fired, version, updated)
            WHERE a.id = u.id
            """, logger: logger)
        return alarms.map { FeedChange(alarmId: $0.id, before: $0.members, after: $0.members, deleted: false) }
    }
}
