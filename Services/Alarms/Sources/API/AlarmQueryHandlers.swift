import AlarmsCore
import Contracts
import Foundation
import Messaging

/// The list queries of §4.2 and the delta feed of §14.
struct AlarmQueryHandlers: Sendable {
    let store: AlarmStore

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
        let scope: AlarmStore.ListScope
        switch q.scope ?? "all" {
        case "all": scope = .all
        case "mine": scope = .mine
        case "shared": scope = .shared
        case "group":
            guard let g = q.groupId, !g.isEmpty else { throw ServiceError(.validationFailed, "groupId is required with scope=group") }
            scope = .group(g)
        default: throw ServiceError(.validationFailed, "scope must be all, mine, shared or group")
        }
        let when: AlarmStore.ListWhen?
        switch q.when {
        case nil: when = nil
        case "upcoming": when = .upcoming
        case "overdue": when = .overdue
        default: throw ServiceError(.validationFailed, "when must be upcoming or overdue")
        }
        if let type = q.type {
            guard ["weekly", "monthly", "annual", "custom", "once"].contains(type) else {
                throw ServiceError(.validationFailed, "type must be weekly, monthly, annual, custom or once")
            }
        }
        var title: String? = nil
        if let text = q.q, !text.isEmpty {
            guard text.count <= 100 else { throw ServiceError(.validationFailed, "q must be at most 100 characters") }
            title = text
        }
        var after: (nextFireDate: Date?, id: String)? = nil
        if let cursor = q.cursor {
            let c = try Cursor.decode(cursor)
            after = (c.n.map { Date(timeIntervalSince1970: Double($0) / 1000) }, c.i)
        }
        var alarms = try await store.list(for: actor, scope: scope, active: q.active, when: when, type: q.type, title: title,
                                          after: after, limit: limit + 1)
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
        let (entries, more) = try await store.feed(of: actor, since: since, limit: limit)
        var changes: [AlarmChange] = []
        var last = since
        for entry in entries {
            last = entry.seq
            // A removal, a row gone, a deleted alarm or one the user no longer sees: a tombstone.
            if let alarm = entry.alarm, alarm.deletedAt == nil, alarm.isVisible(to: actor) {
                changes.append(AlarmChange(id: entry.alarmId, deleted: false, alarm: alarm))
            } else {
                changes.append(AlarmChange(id: entry.alarmId, deleted: true, alarm: nil))
            }
        }
        return AlarmFeedPage(changes: changes, nextCursor: String(last), hasMore: more)
    }
}
