import Contracts
import Foundation
import Messaging
import Persistence
import PostgresNIO

/// The list queries of §4.2 and the delta feed of §14.
struct AlarmQueryHandlers: Sendable {
    let store: AlarmStore

    var database: Database { store.database }

    func register(into router: inout RPCRouter) {
        router.on(AlarmsMethods.List.self) { q, ctx in try await list(q, actor: try ctx.requireActor()) }
        router.on(AlarmsMethods.Feed.self) { q, ctx in try await feed(q, actor: try ctx.requireActor()) }
    }

    /// Keyset cursor over (nextFireDate nulls last, id).
    struct Cursor: Codable {
        var n: Int64?
        var i: String

        func encoded() -> String {
            Data((try? JSONCoding.encode(self)) ?? Data()).base64EncodedString()
        }

        static func decode(_ text: String) throws -> Cursor {
            guard let data = Data(base64Encoded: text), let c = try? JSONCoding.decoder().decode(Cursor.self, from: data) else {
                throw ServiceError(.validationFailed, "cursor is not one this API returned")
            }
            return c
        }
    }

    func list(_ q: AlarmListQuery, actor: String) async throws -> AlarmPage {
        let limit = q.limit ?? 50
        guard (1...200).contains(limit) else { throw ServiceError(.validationFailed, "limit must be 1–200") }
        var sql = "SELECT \(AlarmRow.columns) FROM alarms WHERE deleted_at IS NULL"
        var binds = PostgresBindings()
        func bind<T: PostgresEncodable>(_ v: T) throws -> String {
            try binds.append(v)
            return "$\(binds.count)"
        }
        switch q.scope ?? "all" {
        case "all": sql += " AND (owner_id = \(try bind(actor)) OR \(try bind(actor)) = ANY(shared_with))"
        case "mine": sql += " AND owner_id = \(try bind(actor))"
        case "shared": sql += " AND \(try bind(actor)) = ANY(shared_with)"
        case "group":
            guard let g = q.groupId, !g.isEmpty else { throw ServiceError(.validationFailed, "groupId is required with scope=group") }
            sql += " AND group_id = \(try bind(g)) AND (owner_id = \(try bind(actor)) OR \(try bind(actor)) = ANY(shared_with))"
        default: throw ServiceError(.validationFailed, "scope must be all, mine, shared or group")
        }
        if q.active == true { sql += " AND is_active" }
        if q.active == false { sql += " AND NOT is_active" }
        switch q.when {
        case nil: break
        case "upcoming": sql += " AND next_fire_date > now()"
        case "overdue": sql += " AND next_fire_date < now() AND is_active"
        default: throw ServiceError(.validationFailed, "when must be upcoming or overdue")
        }
        if let type = q.type {
            guard ["weekly", "monthly", "annual", "custom", "once"].contains(type) else {
                throw ServiceError(.validationFailed, "type must be weekly, monthly, annual, custom or once")
            }
            sql += " AND schedule_type = \(try bind(type))"
        }
        if let text = q.q, !text.isEmpty {
            guard text.count <= 100 else { throw ServiceError(.validationFailed, "q must be at most 100 characters") }
            let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_")
            sql += " AND title ILIKE \(try bind("%\(escaped)%"))"
        }
        if let cursor = q.cursor {
            let c = try Cursor.decode(cursor)
            if let n = c.n {
                let d = Date(timeIntervalSince1970: Double(n) / 1000)
                sql += " AND (next_fire_date > \(try bind(d)) OR (next_fire_date = \(try bind(d)) AND id > \(try bind(c.i))) OR next_fire_date IS NULL)"
            } else {
                sql += " AND next_fire_date IS NULL AND id > \(try bind(c.i))"
            }
        }
        sql += " ORDER BY next_fire_date ASC NULLS LAST, id ASC LIMIT \(try bind(limit + 1))"
        var alarms = try await AlarmRow.decodeAll(database.query(PostgresQuery(unsafeSQL: sql, binds: binds)))
        var next: String? = nil
        if alarms.count > limit {
            alarms.removeLast()
            let last = alarms[alarms.count - 1]
            next = Cursor(n: last.nextFireDate.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }, i: last.id).encoded()
        }
        return AlarmPage(alarms: alarms, nextCursor: next)
    }

    func feed(_ q: AlarmFeedQuery, actor: String) async throws -> AlarmFeedPage {
        let limit = q.limit ?? 200
        guard (1...1000).contains(limit) else { throw ServiceError(.validationFailed, "limit must be 1–1000") }
        let since: Int64
        if q.since.isEmpty {
            since = 0
        } else {
            guard let s = Int64(q.since), s >= 0 else { throw ServiceError(.validationFailed, "since must be a cursor from this API (or 0)") }
            since = s
        }
        let rows = try await database.query("""
            SELECT e.alarm_id, e.seq, e.removed, \(unescaped: AlarmRow.columns.split(separator: ",").map { "a." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", "))
            FROM feed_entries e LEFT JOIN alarms a ON a.id = e.alarm_id
            WHERE e.user_id = \(actor) AND e.seq > \(since)
            ORDER BY e.seq LIMIT \(limit + 1)
            """)
        var changes: [AlarmChange] = []
        var last = since
        var more = false
        for try await row in rows {
            if changes.count == limit {
                more = true
                break
            }
            let c = row.makeRandomAccess()
            let id = try c[0].decode(String.self)
            last = try c[1].decode(Int64.self)
            let removed = try c[2].decode(Bool.self)
            let present = try c[3].decode(String?.self) != nil
            if removed || !present {
                changes.append(AlarmChange(id: id, deleted: true, alarm: nil))
            } else {
                let alarm = try AlarmRow.decode(row, offset: 3)
                if alarm.deletedAt != nil || !alarm.isVisible(to: actor) {
                    changes.append(AlarmChange(id: id, deleted: true, alarm: nil))
                } else {
                    changes.append(AlarmChange(id: id, deleted: false, alarm: alarm))
                }
            }
        }
        return AlarmFeedPage(changes: changes, nextCursor: String(last), hasMore: more)
    }
}
