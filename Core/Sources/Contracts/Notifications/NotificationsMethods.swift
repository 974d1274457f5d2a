import Foundation
import Wire

/// Requests the notifications service answers.
public enum NotificationsMethods {
    /// `GET /v1/me/notifications?since=<cursor>&limit=`: the caller's inbox after a cursor, oldest first.
    public struct Inbox: RPCMethod {
        public struct Request: Codable, Sendable {
            /// The last id the client has (0 or absent: from the start of the retained inbox).
            public var since: Int64?
            public var limit: Int?
            /// Whether silent entries (`alarm_changed`, `plan_changed`) are included: the live stream's replay
            /// asks for them; the inbox a person reads (`GET /v1/me/notifications`) leaves them out.
            public var silent: Bool?
            public init(since: Int64?, limit: Int?, silent: Bool? = nil) {
                self.since = since
                self.limit = limit
                self.silent = silent
            }
        }
        public struct Response: Codable, Sendable {
            public var notifications: [InboxNotification]
            /// Pass as `since` for the next page (the last id returned, or the request's).
            public var nextCursor: Int64
            public var hasMore: Bool
            public init(notifications: [InboxNotification], nextCursor: Int64, hasMore: Bool) {
                self.notifications = notifications
                self.nextCursor = nextCursor
                self.hasMore = hasMore
            }
        }
        public static let type = "notifications.inbox"
    }

    /// `POST /v1/me/notifications/{id}/ack`.
    public struct Ack: RPCMethod {
        public struct Request: Codable, Sendable {
            public var id: Int64
            public init(id: Int64) { self.id = id }
        }
        public typealias Response = InboxNotification
        public static let type = "notifications.ack"
    }

    /// Inbox entries still waiting for their instant (all users, oldest id first): what a live
    /// follower that starts at the stream's head must hold before it sees new events.
    public struct Waiting: RPCMethod {
        public struct Request: Codable, Sendable {
            public var after: Int64
            public var limit: Int
            /// The most bytes the asker takes in one reply (its frame limit; default 1 MiB, at
            /// least 64 KiB): the reply stops short of it, `hasMore` set.
            public var maxBytes: Int?
            public init(after: Int64, limit: Int, maxBytes: Int? = nil) {
                self.after = after
                self.limit = limit
                self.maxBytes = maxBytes
            }
        }
        public struct Response: Codable, Sendable {
            public var notifications: [InboxNotification]
            public var hasMore: Bool
            public init(notifications: [InboxNotification], hasMore: Bool) {
                self.notifications = notifications
                self.hasMore = hasMore
            }
        }
        public static let type = "notifications.waiting"
    }

    /// The head of the `notifications` stream (where a live follower starts).
    public struct Head: RPCMethod {
        public typealias Request = Empty
        public struct Response: Codable, Sendable {
            public var head: Int64
            /// PostgreSQL's clock when the head was read, in milliseconds since the epoch: the
            /// clock instants are set by, which a gateway waits by (absent from a peer of an
            /// earlier release).
            public var databaseNow: Int64?
            public init(head: Int64, databaseNow: Int64? = nil) {
                self.head = head
                self.databaseNow = databaseNow
            }
        }
        public static let type = "notifications.head"
    }

    /// Recent delivery attempts (`chronirctl notifications tail`), newest last.
    public struct Attempts: RPCMethod {
        public struct Request: Codable, Sendable {
            /// Attempts after this id.
            public var after: Int64
            public var limit: Int
            public init(after: Int64, limit: Int) {
                self.after = after
                self.limit = limit
            }
        }
        public struct Attempt: Codable, Sendable {
            public var id: Int64
            public var deliveryId: Int64
            public var eventId: String
            public var userId: String
            public var deviceId: String
            public var provider: String
            public var attempt: Int
            /// HTTP status, or 0 when the request did not get an answer.
            public var status: Int
            /// `sent`, `retry`, `failed`, `unregistered`.
            public var outcome: String
            public var latencyMs: Double
            public var error: String?
            public var at: Date
            public init(id: Int64, deliveryId: Int64, eventId: String, userId: String, deviceId: String, provider: String, attempt: Int,
                        status: Int, outcome: String, latencyMs: Double, error: String?, at: Date) {
                self.id = id
                self.deliveryId = deliveryId
                self.eventId = eventId
                self.userId = userId
                self.deviceId = deviceId
                self.provider = provider
                self.attempt = attempt
                self.status = status
                self.outcome = outcome
                self.latencyMs = latencyMs
                self.error = error
                self.at = at
            }
        }
        public struct Response: Codable, Sendable {
            public var attempts: [Attempt]
            public init(attempts: [Attempt]) { self.attempts = attempts }
        }
        public static let type = "notifications.attempts"
        public static let access = MethodAccess.operatorOnly
    }
}
