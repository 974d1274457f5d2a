import Foundation

/// `GET /v1/alarms` query (`chronir-api.md` §4.2), sorted by `nextFireDate` (nulls last).
public struct AlarmListQuery: Codable, Sendable, Equatable {
    /// `all` (mine and shared with me, default), `mine`, `shared`, `group`.
    public var scope: String?
    /// With `scope=group`.
    public var groupId: String?
    /// Only `isActive` alarms.
    public var active: Bool?
    /// `upcoming` (nextFireDate > now) or `overdue` (nextFireDate < now and active).
    public var when: String?
    /// Schedule type filter chip: weekly, monthly, annual, custom, once.
    public var type: String?
    /// Case-insensitive search in titles.
    public var q: String?
    /// Page size, 1–200 (default 50).
    public var limit: Int?
    /// Opaque cursor from the previous page.
    public var cursor: String?

    public init(scope: String? = nil, groupId: String? = nil, active: Bool? = nil, when: String? = nil, type: String? = nil,
                q: String? = nil, limit: Int? = nil, cursor: String? = nil) {
        self.scope = scope
        self.groupId = groupId
        self.active = active
        self.when = when
        self.type = type
        self.q = q
        self.limit = limit
        self.cursor = cursor
    }
}

/// A page of alarms.
public struct AlarmPage: Codable, Sendable {
    public var alarms: [Alarm]
    /// Pass back as `cursor` for the next page; null on the last page.
    public var nextCursor: String?

    public init(alarms: [Alarm], nextCursor: String?) {
        self.alarms = alarms
        self.nextCursor = nextCursor
    }
}

/// `GET /v1/alarms?since=<cursor>`: what changed for the caller since a cursor.
public struct AlarmFeedQuery: Codable, Sendable {
    /// From an earlier answer's `nextCursor`; `0` (or empty) for everything.
    public var since: String
    public var limit: Int?

    public init(since: String, limit: Int? = nil) {
        self.since = since
        self.limit = limit
    }
}

/// One change in the delta feed: the alarm's current state, or a tombstone when it was
/// deleted or the caller lost access.
public struct AlarmChange: Codable, Sendable, Equatable {
    public var id: String
    /// True for a tombstone: drop the alarm from the local copy.
    public var deleted: Bool
    /// The alarm, when not deleted.
    public var alarm: Alarm?

    public init(id: String, deleted: Bool, alarm: Alarm?) {
        self.id = id
        self.deleted = deleted
        self.alarm = alarm
    }
}

/// A page of the delta feed, in change order.
public struct AlarmFeedPage: Codable, Sendable {
    public var changes: [AlarmChange]
    /// The cursor to ask with next time (equal to `since` when nothing changed).
    public var nextCursor: String
    /// Whether more changes wait (ask again at once with `nextCursor`).
    public var hasMore: Bool

    public init(changes: [AlarmChange], nextCursor: String, hasMore: Bool) {
        self.changes = changes
        self.nextCursor = nextCursor
        self.hasMore = hasMore
    }
}
