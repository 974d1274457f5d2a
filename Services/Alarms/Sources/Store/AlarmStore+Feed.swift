import Contracts
import Foundation
import Persistence
import PostgresNIO

/// The SQL of reading the delta feed (`chronir-api.md` §14; ``AlarmStore/bumpFeed(_:on:)``
/// writes it).
extension AlarmStore {
    /// One entry of a user's delta feed.
    struct FeedEntry: Sendable {
        /// The alarm the entry is about.
        var alarmId: String
        /// The entry's number in the user's feed.
        var seq: Int64
        /// The alarm's row; nil when the entry records a removal or the row is gone.
        var alarm: Alarm?
    }

    /// `user`'s feed entries numbered after `since`, in order: at most `limit`, and whether more
    /// follow (one more row is read to tell, and not decoded).
    func feed(of user: String, since: Int64, limit: Int) async throws -> (entries: [FeedEntry], more: Bool) {
        let rows = try await database.query("""
            SELECT e.alarm_id, e.seq, e.removed, \(unescaped: AlarmRow.columns.split(separator: ",").map { "a." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", "))
            FROM feed_entries e LEFT JOIN alarms a ON a.id = e.alarm_id
            WHERE e.user_id = \(user) AND e.seq > \(since)
            ORDER BY e.seq LIMIT \(limit + 1)
            """)
        var entries: [FeedEntry] = []
        var more = false
        for try await row in rows {
            if entries.count == limit {
                more = true
                break
            }
            let c = row.makeRandomAccess()
            let id = try c[0].decode(String.self)
            let seq = try c[1].decode(Int64.self)
            let removed = try c[2].decode(Bool.self)
            let present = try c[3].decode(String?.self) != nil
            var alarm: Alarm? = nil
            if !(removed || !present) {
                alarm = try AlarmRow.decode(row, offset: 3)
            }
            entries.append(FeedEntry(alarmId: id, seq: seq, alarm: alarm))
        }
        return (entries, more)
    }
}
