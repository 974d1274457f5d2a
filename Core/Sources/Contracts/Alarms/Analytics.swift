import Foundation
import Wire

/// Product analytics (US-13.1). Server events are derived from the streams; the client sends
/// only what the server cannot see. Users appear as keyed pseudonyms, never by uid, email,
/// title or note.
public enum AnalyticsEventName: String, Codable, Sendable, CaseIterable {
    // Derived from the streams.
    case alarmCreated = "alarm_created"
    case alarmFired = "alarm_fired"
    case alarmSnoozed = "alarm_snoozed"
    case alarmCompleted = "alarm_completed"
    case alarmDeleted = "alarm_deleted"
    case upgradeCompleted = "upgrade_completed"
    case shareInitiated = "share_initiated"
    // Sent by clients.
    case upgradePromptShown = "upgrade_prompt_shown"
    case onboardingCompleted = "onboarding_completed"
    case alarmDismissed = "alarm_dismissed"

    /// The events a client may send (`POST /v1/analytics/events`).
    public static let fromClients: Set<AnalyticsEventName> = [.upgradePromptShown, .onboardingCompleted, .alarmDismissed]

    /// Whether the event is something the user did (counts toward daily activity); a fire is not.
    public var isUserActivity: Bool { self != .alarmFired }
}

/// One event a client sends: its name, when it happened (default: when received; at most 30
/// days back) and its properties (`timeToDismissSeconds` for `alarm_dismissed`, `trigger` and
/// `tier` for `upgrade_prompt_shown`, `step` for `onboarding_completed`; numbers and short
/// strings only).
public struct ClientAnalyticsEvent: Codable, Sendable {
    public var name: String
    public var occurredAt: Date?
    public var properties: [String: JSONValue]?
    public init(name: String, occurredAt: Date? = nil, properties: [String: JSONValue]? = nil) {
        self.name = name
        self.occurredAt = occurredAt
        self.properties = properties
    }
}

public struct ClientAnalyticsBatch: Codable, Sendable {
    public var events: [ClientAnalyticsEvent]
    public init(events: [ClientAnalyticsEvent]) { self.events = events }
}

public struct ClientAnalyticsAccepted: Codable, Sendable {
    public var accepted: Int
    public init(accepted: Int) { self.accepted = accepted }
}

/// The operator's report (`chronirctl analytics`).
public struct AnalyticsReport: Codable, Sendable, Equatable {
    public struct Day: Codable, Sendable, Equatable {
        public var day: String
        public var activeUsers: Int
        public init(day: String, activeUsers: Int) {
            self.day = day
            self.activeUsers = activeUsers
        }
    }
    /// Of the users who signed up on `day`, the share active 1, 7 and 30 days later (nil
    /// while that day has not come yet).
    public struct Cohort: Codable, Sendable, Equatable {
        public var day: String
        public var users: Int
        public var d1: Double?
        public var d7: Double?
        public var d30: Double?
        public init(day: String, users: Int, d1: Double?, d7: Double?, d30: Double?) {
            self.day = day
            self.users = users
            self.d1 = d1
            self.d7 = d7
            self.d30 = d30
        }
    }
    /// Users who signed up in the window, and how many of them reached Plus and Premium.
    public struct Conversion: Codable, Sendable, Equatable {
        public var signups: Int
        public var reachedPlus: Int
        public var reachedPremium: Int
        public var freeToPlus: Double?
        public var plusToPremium: Double?
        public init(signups: Int, reachedPlus: Int, reachedPremium: Int, freeToPlus: Double?, plusToPremium: Double?) {
            self.signups = signups
            self.reachedPlus = reachedPlus
            self.reachedPremium = reachedPremium
            self.freeToPlus = freeToPlus
            self.plusToPremium = plusToPremium
        }
    }
    /// Each event's count and distinct users in the window.
    public struct Usage: Codable, Sendable, Equatable {
        public var event: String
        public var count: Int
        public var users: Int
        public init(event: String, count: Int, users: Int) {
            self.event = event
            self.count = count
            self.users = users
        }
    }
    public var from: String
    public var to: String
    public var dailyActiveUsers: [Day]
    public var retention: [Cohort]
    public var conversion: Conversion
    public var usage: [Usage]
    public init(from: String, to: String, dailyActiveUsers: [Day], retention: [Cohort], conversion: Conversion, usage: [Usage]) {
        self.from = from
        self.to = to
        self.dailyActiveUsers = dailyActiveUsers
        self.retention = retention
        self.conversion = conversion
        self.usage = usage
    }
}

/// The analytics requests of the alarms service, which keeps the product analytics.
public enum AnalyticsMethods {
    /// Client events of the actor.
    public struct Record: RPCMethod {
        public typealias Request = ClientAnalyticsBatch
        public typealias Response = ClientAnalyticsAccepted
        public static let type = "alarms.analytics.record"
    }
    /// The report over the last `days` days (UTC), for operators.
    public struct Report: RPCMethod {
        public struct Request: Codable, Sendable {
            public var days: Int
            public init(days: Int) { self.days = days }
        }
        public typealias Response = AnalyticsReport
        public static let type = "alarms.analytics.report"
        public static let access = MethodAccess.operatorOnly
    }
}
