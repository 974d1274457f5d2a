import Foundation
import Wire

/// A subscribable calendar feed: a secret URL a calendar app polls without a bearer token.
public struct CalendarFeed: Codable, Sendable, Equatable {
    public var id: String
    /// `me` (the caller's alarms and those shared with them) or `group` (one group's alarms).
    public var scope: String
    public var groupId: String?
    public var createdAt: Date
    public var lastFetchedAt: Date?
    /// The secret, only in the answer that creates the feed (only its hash is kept).
    public var token: String?

    public init(id: String, scope: String, groupId: String?, createdAt: Date, lastFetchedAt: Date?, token: String? = nil) {
        self.id = id
        self.scope = scope
        self.groupId = groupId
        self.createdAt = createdAt
        self.lastFetchedAt = lastFetchedAt
        self.token = token
    }
}

public struct CalendarFeedCreate: Codable, Sendable {
    public var scope: String
    public var groupId: String?
    public init(scope: String, groupId: String? = nil) {
        self.scope = scope
        self.groupId = groupId
    }
}

public struct CalendarFeedList: Codable, Sendable {
    public var feeds: [CalendarFeed]
    public init(feeds: [CalendarFeed]) { self.feeds = feeds }
}

public struct CalendarFeedRef: Codable, Sendable {
    public var id: String
    public init(id: String) { self.id = id }
}

public struct CalendarFeedFetch: Codable, Sendable {
    public var token: String
    public init(token: String) { self.token = token }
}

/// A feed's calendar and its entity tag.
public struct CalendarFeedDocument: Codable, Sendable {
    public var body: String
    public var etag: String
    public init(body: String, etag: String) {
        self.body = body
        self.etag = etag
    }
}

/// The calendar-feed requests of the alarms service.
public enum CalendarFeedMethods {
    public struct Create: RPCMethod {
        public typealias Request = CalendarFeedCreate
        public typealias Response = CalendarFeed
        public static let type = "alarms.calendar-feeds.create"
    }
    public struct List: RPCMethod {
        public typealias Request = Empty
        public typealias Response = CalendarFeedList
        public static let type = "alarms.calendar-feeds.list"
    }
    public struct Delete: RPCMethod {
        public typealias Request = CalendarFeedRef
        public typealias Response = Empty
        public static let type = "alarms.calendar-feeds.delete"
    }
    /// The feed behind a token (no actor: the token is the credential).
    public struct Fetch: RPCMethod {
        public typealias Request = CalendarFeedFetch
        public typealias Response = CalendarFeedDocument
        public static let type = "alarms.calendar-feed"
    }
}
