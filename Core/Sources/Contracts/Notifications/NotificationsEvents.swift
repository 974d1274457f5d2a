import Foundation
import Wire

/// Events of the `notifications` stream (published; the gateway follows it for live streams).
public enum NotificationsEvents {
    /// A notification was stored in a user's inbox.
    /// Version 2 adds the type `alarm_changed` (a silent sync of a shared alarm): consumers
    /// built for version 1 stop at it, so the gateway is upgraded before notifications.
    public static let notificationCreated = TypedEvent<NotificationCreated>("notifications.notification-created", version: 2)

    /// Payload of ``notificationCreated``.
    public struct NotificationCreated: Codable, Sendable, Equatable {
        public var notification: InboxNotification
        public init(notification: InboxNotification) { self.notification = notification }
    }

    /// Notifications that were waiting for their instant were withdrawn (their fire was
    /// withdrawn before it was due); live followers drop them if they still hold them.
    public static let notificationWithdrawn = TypedEvent<NotificationWithdrawn>("notifications.notification-withdrawn")

    /// Payload of ``notificationWithdrawn``.
    public struct NotificationWithdrawn: Codable, Sendable, Equatable {
        public var userId: String
        /// Inbox ids, removed from the inbox.
        public var ids: [Int64]
        public init(userId: String, ids: [Int64]) {
            self.userId = userId
            self.ids = ids
        }
    }
}

/// One entry of a user's inbox (`GET /v1/me/notifications`), also what the live stream sends.
public struct InboxNotification: Codable, Sendable, Equatable {
    /// Increasing per deployment; the cursor of the inbox and the SSE event id.
    public var id: Int64
    public var userId: String
    /// `alarm_fired`, `pre_alarm`, `alarm_missed`, `alarm_completed`, `invitation_received`, …
    public var type: String
    public var title: String
    public var body: String
    /// String data for the client (`alarmId`, `groupId`, `deepLink`, …).
    public var data: [String: String]
    /// The event this notification comes from.
    public var eventId: String
    /// When the notification entered the inbox: for a fire or a warning, its due instant (a
    /// fire announced ahead of time waits, out of the inbox and the live stream, until then).
    public var createdAt: Date
    public var ackedAt: Date?

    public init(id: Int64, userId: String, type: String, title: String, body: String, data: [String: String], eventId: String,
                createdAt: Date, ackedAt: Date?) {
        self.id = id
        self.userId = userId
        self.type = type
        self.title = title
        self.body = body
        self.data = data
        self.eventId = eventId
        self.createdAt = createdAt
        self.ackedAt = ackedAt
    }
}

extension NotificationsEvents: EventCatalogue {
    public static let stream = "notifications"
    public static let all: [any EventType] = [notificationCreated, notificationWithdrawn]
}
