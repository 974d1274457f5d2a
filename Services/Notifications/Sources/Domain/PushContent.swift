import Foundation

/// A notification as the user sees it, before a provider shapes it for APNs, FCM or a webhook.
struct PushContent: Codable, Sendable, Equatable {
    /// `alarm_fired`, `pre_alarm`, `alarm_missed`, `alarm_completed`, `invitation_received`,
    /// `invitation_accepted`, `alarm_changed`, `plan_changed`.
    var type: String
    var title: String
    var body: String
    /// String values only (FCM's `data` is a string map).
    var data: [String: String]
    /// A fire breaks through Do Not Disturb (APNs priority 10, time-sensitive; FCM high);
    /// everything else is a standard notification that respects it.
    var urgent: Bool
    /// `chronir://alarm/{id}` or `https://chronir.app/invite/{code}`.
    var deepLink: String?
    /// APNs/FCM collapse key: a newer push about the same thing replaces the older one.
    var collapseKey: String?
    /// A data push the app handles without showing anything (`alarm_changed`: read the delta
    /// feed): APNs `content-available` background push, FCM data message. Nil: shown.
    var silent: Bool? = nil
}

/// Who gets a notification and what it says.
struct RenderedNotification: Sendable {
    var recipients: [String]
    var content: PushContent
    /// The instant it is for (a fire's or a warning's due instant): it waits, out of the inbox,
    /// the live stream and the push queue, until then. Nil: now.
    var deliverAt: Date? = nil
}
