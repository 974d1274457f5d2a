import Contracts
import Foundation
import Persistence
import PostgresNIO

/// The SQL of listing alarms: the filtered pages of `GET /v1/alarms` and the active alarms a
/// calendar shows. Sharing is tested as `shared_with @> ARRAY[user]`, the form the GIN index
/// `alarms_shared_with` answers (`user = ANY(shared_with)` means the same and reads every row).
extension AlarmStore {
    /// Whose alarms a list covers (`AlarmListQuery.scope`).
    enum ListScope: Sendable {
        /// The user's own alarms and those shared with them.
        case all
        /// The user's own alarms.
        case mine
        /// Alarms shared with the user.
        case shared
        /// The alarms of one group that the user owns or shares.
        case group(String)
    }

    /// Which next fire dates a list keeps (`AlarmListQuery.when`).
    enum ListWhen: Sendable {
        /// Next fire date after now.
        case upcoming
        /// Next fire date before now, active alarms only.
        case overdue
    }

    /// A page of `user`'s live alarms in keyset order (next fire date, nulls last, then id):
    /// those of `scope`, active or not (`active`), by next fire date (`when`), of one schedule
    /// `type`, whose title contains `title` (case-insensitively, `%`, `_` and `\` taken
    /// literally), after the position `after` (the next fire date and id of the last alarm of
    /// the previous page; nil date: that alarm had none); at most `limit` rows.
    func list(for user: String, scope: ListScope, active: Bool?, when: ListWhen?, type: String?, title: String?,
              after: (nextFireDate: Date?, id: String)?, limit: Int) async throws -> [Alarm] {
        try await AlarmRow.decodeAll(database.query(Self.listQuery(for: user, scope: scope, active: active, when: when, type: type,
                                                                   title: title, after: after, limit: limit)))
    }

    /// The statement of ``list(for:scope:active:when:type:title:after:limit:)``.
    static func listQuery(for user: String, scope: ListScope, active: Bool?, when: ListWhen?, type: String?, title: String?,
                          after: (nextFireDate: Date?, id: String)?, limit: Int) throws -> PostgresQuery {
        var q = try ConditionalQuery("SELECT \(AlarmRow.columns) FROM alarms WHERE deleted_at IS NULL")
        switch scope {
        case .all: try q.and("(owner_id = {} OR shared_with @> ARRAY[{}::text])", user, user)
        case .mine: try q.and("owner_id = {}", user)
        case .shared: try q.and("shared_with @> ARRAY[{}::text]", user)
        case .group(let g): try q.and("group_id = {} AND (owner_id = {} OR shared_with @> ARRAY[{}::text])", g, user, user)
        }
        if active == true { try q.and("is_active") }
        if active == false { try q.and("NOT is_active") }
        switch when {
        case nil: break
        case .upcoming?: try q.and("next_fire_date > now()")
        case .overdue?: try q.and("next_fire_date < now() AND is_active")
        }
        if let type { try q.and("schedule_type = {}", type) }
        if let text = title {
            let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_")
            try q.and("title ILIKE {}", "%\(escaped)%")
        }
        if let after {
            if let d = after.nextFireDate {
                try q.and("(next_fire_date > {} OR (next_fire_date = {} AND id > {}) OR next_fire_date IS NULL)", d, d, after.id)
            } else {
                try q.and("next_fire_date IS NULL AND id > {}", after.id)
            }
        }
        try q.append("ORDER BY next_fire_date ASC NULLS LAST, id ASC LIMIT {}", limit)
        return q.query
    }

    /// The live, active alarms `user` owns or shares, soonest first (nulls last, then id), at
    /// most 5 000: what a calendar of theirs shows.
    func activeAlarms(visibleTo user: String, on c: PostgresConnection) async throws -> [Alarm] {
        try await AlarmRow.decodeAll(c.query(Self.activeAlarmsQuery(visibleTo: user), logger: logger))
    }

    /// ``activeAlarms(visibleTo:on:)`` outside a transaction.
    func activeAlarms(visibleTo user: String) async throws -> [Alarm] {
        try await AlarmRow.decodeAll(database.query(Self.activeAlarmsQuery(visibleTo: user)))
    }

    /// The statement of ``activeAlarms(visibleTo:on:)``.
    static func activeAlarmsQuery(visibleTo user: String) -> PostgresQuery {
        """
        SELECT \(unescaped: AlarmRow.columns) FROM alarms
        WHERE deleted_at IS NULL AND is_active AND (owner_id = \(user) OR shared_with @> ARRAY[\(user)::text])
        ORDER BY next_fire_date NULLS LAST, id LIMIT 5000
        """
    }

    /// The live, active alarms of `group` that `user` sees (owns or is shared with: a member an
    /// owner took off an alarm no longer reads it here either), soonest first (nulls last, then
    /// id), at most 5 000: what the group's calendar shows its feed's owner.
    func activeAlarms(inGroup group: String, visibleTo user: String, on c: PostgresConnection) async throws -> [Alarm] {
        try await AlarmRow.decodeAll(c.query("""
            SELECT \(unescaped: AlarmRow.columns) FROM alarms WHERE deleted_at IS NULL AND is_active AND group_id = \(group)
              AND (owner_id = \(user) OR shared_with @> ARRAY[\(user)::text])
            ORDER BY next_fire_date NULLS LAST, id LIMIT 5000
            """, logger: logger))
    }
}
