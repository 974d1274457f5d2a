import Foundation

/// A notification as the user sees it, before a provider shapes it for APNs, FCM or a webhook.
public struct PushContent: Codable, Sendable, Equatable {
    /// `alarm_fired`, `pre_alarm`, `alarm_missed`, `alarm_completed`, `invitation_received`,
    /// `invitation_accepted`, `alarm_changed`, `plan_changed`.
    public var type: String
    public var title: String
    public var body: String
    /// String values only (FCM's `data` is a string map).
    public var data: [String: String]
    /// A fire breaks through Do Not Disturb (APNs priority 10, time-sensitive; FCM high);
    /// everything else is a standard notification that respects it.
    public var urgent: Bool
    /// `chronir://alarm/{id}` or `https://chronir.app/invite/{code}`.
    public var deepLink: String?
    /// APNs/FCM collapse key: a newer push about the same thing replaces the older one.
    public var collapseKey: String?
    /// A data push the app handles without showing anything (`alarm_changed`: read the delta
    /// feed): APNs `content-available` background push, FCM data message. Nil: shown.
    public var silent: Bool? = nil

    public init(type: String, title: String, body: String, data: [String: String], urgent: Bool, deepLink: String? = nil,
                collapseKey: String? = nil, silent: Bool? = nil) {
        self.type = type
        self.title = title
        self.body = body
        self.data = data
        self.urgent = urgent
        self.deepLink = deepLink
        self.collapseKey = collapseKey
        self.silent = silent
    }
}

/// Who gets a notification and what it says.
public struct RenderedNotification: Sendable {
    public var recipients: [String]
    public var content: PushContent
    /// The instant it is for (a fire's or a warning's due instant): it waits, out of the inbox,
    /// the live stream and the push queue, until then. Nil: now.
    public var deliverAt: Date? = nil

    public init(recipients: [String], content: PushContent, deliverAt: Date? = nil) {
        self.recipients = recipients
        self.content = content
        self.deliverAt = deliverAt
    }
}
