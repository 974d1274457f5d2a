import Foundation

/// A user's profile (`chronir-api.md` §3.2). `tier` is read-only for clients: it comes from
/// billing's entitlement events.
public struct User: Codable, Sendable, Equatable {
    public var uid: String
    public var email: String
    public var displayName: String
    public var photoURL: String?
    public var tier: Tier
    public var createdAt: Date
    public var updatedAt: Date
    public var migratedAt: Date?
    public var settings: UserSettings
    public var platform: String?
    public var appVersion: String?
    public var fcmToken: String?
    /// When the email was confirmed by the link of a verification mail (nil: not yet).
    public var emailVerifiedAt: Date?
    /// Whether the user agreed to product analytics (US-13.1): without it no analytics event
    /// is derived from what they do. Off until they agree.
    public var analyticsConsent: Bool
    /// The user's home zone (US-7.3 "set home timezone explicitly"); nil: the profile's
    /// `settings.timezone`. Setting or changing it moves the fixed alarms kept in the previous
    /// home zone to it, at the same local times ("always fires at home time").
    public var homeTimezone: String?

    public init(uid: String, email: String, displayName: String, photoURL: String? = nil, tier: Tier = .free,
                createdAt: Date, updatedAt: Date, migratedAt: Date? = nil, settings: UserSettings,
                platform: String? = nil, appVersion: String? = nil, fcmToken: String? = nil, emailVerifiedAt: Date? = nil,
                analyticsConsent: Bool = false, homeTimezone: String? = nil) {
        self.emailVerifiedAt = emailVerifiedAt
        self.analyticsConsent = analyticsConsent
        self.homeTimezone = homeTimezone
        self.uid = uid
        self.email = email
        self.displayName = displayName
        self.photoURL = photoURL
        self.tier = tier
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.migratedAt = migratedAt
        self.settings = settings
        self.platform = platform
        self.appVersion = appVersion
        self.fcmToken = fcmToken
    }

    enum CodingKeys: String, CodingKey {
        case uid, email, displayName, photoURL, tier, createdAt, updatedAt, migratedAt, settings, platform, appVersion, fcmToken, emailVerifiedAt,
             analyticsConsent, homeTimezone
    }

    /// Decodes a profile; `analyticsConsent` and `homeTimezone` (added in 0.3) default when a
    /// peer of an older release leaves them out.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        uid = try c.decode(String.self, forKey: .uid)
        email = try c.decode(String.self, forKey: .email)
        displayName = try c.decode(String.self, forKey: .displayName)
        photoURL = try c.decodeIfPresent(String.self, forKey: .photoURL)
        tier = try c.decode(Tier.self, forKey: .tier)
        createdAt = try c.decode(Date.self, forKey: .createdAt)
        updatedAt = try c.decode(Date.self, forKey: .updatedAt)
        migratedAt = try c.decodeIfPresent(Date.self, forKey: .migratedAt)
        settings = try c.decode(UserSettings.self, forKey: .settings)
        platform = try c.decodeIfPresent(String.self, forKey: .platform)
        appVersion = try c.decodeIfPresent(String.self, forKey: .appVersion)
        fcmToken = try c.decodeIfPresent(String.self, forKey: .fcmToken)
        emailVerifiedAt = try c.decodeIfPresent(Date.self, forKey: .emailVerifiedAt)
        analyticsConsent = try c.decodeIfPresent(Bool.self, forKey: .analyticsConsent) ?? false
        homeTimezone = try c.decodeIfPresent(String.self, forKey: .homeTimezone)
    }

    /// Encodes absent values as `null`, as the API's TypeScript interfaces show them.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(uid, forKey: .uid)
        try c.encode(email, forKey: .email)
        try c.encode(displayName, forKey: .displayName)
        try c.encodeNullable(photoURL, forKey: .photoURL)
        try c.encode(tier, forKey: .tier)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encodeNullable(migratedAt, forKey: .migratedAt)
        try c.encode(settings, forKey: .settings)
        try c.encodeNullable(platform, forKey: .platform)
        try c.encodeNullable(appVersion, forKey: .appVersion)
        try c.encodeNullable(fcmToken, forKey: .fcmToken)
        try c.encodeNullable(emailVerifiedAt, forKey: .emailVerifiedAt)
        try c.encode(analyticsConsent, forKey: .analyticsConsent)
        try c.encodeNullable(homeTimezone, forKey: .homeTimezone)
    }
}

/// The subscription tiers.
public enum Tier: String, Codable, Sendable, CaseIterable, Comparable {
    case free, plus, premium

    var rank: Int {
        switch self {
        case .free: 0
        case .plus: 1
        case .premium: 2
        }
    }

    public static func < (a: Tier, b: Tier) -> Bool { a.rank < b.rank }
}

/// Per-user preferences (`chronir-api.md` §3.2).
public struct UserSettings: Codable, Sendable, Equatable {
    public var defaultSnoozeMinutes: Int
    public var preAlarmWarningEnabled: Bool
    public var preAlarmWarningHours: Int
    public var timezone: String
    public var use24HourFormat: Bool
    public var soundId: String
    public var vibrationEnabled: Bool

    public init(defaultSnoozeMinutes: Int = 60, preAlarmWarningEnabled: Bool = true, preAlarmWarningHours: Int = 24,
                timezone: String = "UTC", use24HourFormat: Bool = false, soundId: String = "default", vibrationEnabled: Bool = true) {
        self.defaultSnoozeMinutes = defaultSnoozeMinutes
        self.preAlarmWarningEnabled = preAlarmWarningEnabled
        self.preAlarmWarningHours = preAlarmWarningHours
        self.timezone = timezone
        self.use24HourFormat = use24HourFormat
        self.soundId = soundId
        self.vibrationEnabled = vibrationEnabled
    }
}
