import Foundation
import Wire

/// `PATCH /v1/me`: the profile fields to change. Members left out stay as they are; `null`
/// clears a nullable one. `tier`, `email`, `uid` and timestamps are read-only and refused.
public struct UserPatch: Codable, Sendable, Equatable {
    public var displayName: Patch<String> = .unchanged
    public var photoURL: Patch<String> = .unchanged
    public var platform: Patch<String> = .unchanged
    public var appVersion: Patch<String> = .unchanged
    public var migratedAt: Patch<Date> = .unchanged
    public var fcmToken: Patch<String> = .unchanged
    /// Not nullable.
    public var analyticsConsent: Patch<Bool> = .unchanged
    /// An IANA zone; `null` goes back to the profile's `settings.timezone`.
    public var homeTimezone: Patch<String> = .unchanged
    public var settings: SettingsPatch? = nil

    public init() {}

    static let allowed: Set<String> = ["displayName", "photoURL", "platform", "appVersion", "migratedAt", "fcmToken", "settings",
                                      "analyticsConsent", "homeTimezone"]
    static let readOnly = [
        "tier": "it follows the subscription",
        "email": "it identifies the account",
        "uid": "it identifies the account",
        "createdAt": "set by the server",
        "updatedAt": "set by the server",
    ]

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyCodingKey.self)
        try c.rejectUnknown(allowed: Self.allowed, readOnly: Self.readOnly)
        displayName = try c.patch(String.self, "displayName")
        photoURL = try c.patch(String.self, "photoURL")
        platform = try c.patch(String.self, "platform")
        appVersion = try c.patch(String.self, "appVersion")
        migratedAt = try c.patch(Date.self, "migratedAt")
        fcmToken = try c.patch(String.self, "fcmToken")
        analyticsConsent = try c.patch(Bool.self, "analyticsConsent")
        homeTimezone = try c.patch(String.self, "homeTimezone")
        if c.contains(AnyCodingKey("settings")) {
            settings = try c.decode(SettingsPatch.self, forKey: AnyCodingKey("settings"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyCodingKey.self)
        try c.encode(displayName, "displayName")
        try c.encode(photoURL, "photoURL")
        try c.encode(platform, "platform")
        try c.encode(appVersion, "appVersion")
        try c.encode(migratedAt, "migratedAt")
        try c.encode(fcmToken, "fcmToken")
        try c.encode(analyticsConsent, "analyticsConsent")
        try c.encode(homeTimezone, "homeTimezone")
        if let settings { try c.encode(settings, forKey: AnyCodingKey("settings")) }
    }
}

/// The settings members to change.
public struct SettingsPatch: Codable, Sendable, Equatable {
    public var defaultSnoozeMinutes: Int?
    public var preAlarmWarningEnabled: Bool?
    public var preAlarmWarningHours: Int?
    public var timezone: String?
    public var use24HourFormat: Bool?
    public var soundId: String?
    public var vibrationEnabled: Bool?

    public init() {}

    static let allowed: Set<String> = ["defaultSnoozeMinutes", "preAlarmWarningEnabled", "preAlarmWarningHours", "timezone",
                                       "use24HourFormat", "soundId", "vibrationEnabled"]

    enum CodingKeys: String, CodingKey {
        case defaultSnoozeMinutes, preAlarmWarningEnabled, preAlarmWarningHours, timezone, use24HourFormat, soundId, vibrationEnabled
    }

    public init(from decoder: any Decoder) throws {
        let any = try decoder.container(keyedBy: AnyCodingKey.self)
        try any.rejectUnknown(allowed: Self.allowed)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        defaultSnoozeMinutes = try c.decodeIfPresent(Int.self, forKey: .defaultSnoozeMinutes)
        preAlarmWarningEnabled = try c.decodeIfPresent(Bool.self, forKey: .preAlarmWarningEnabled)
        preAlarmWarningHours = try c.decodeIfPresent(Int.self, forKey: .preAlarmWarningHours)
        timezone = try c.decodeIfPresent(String.self, forKey: .timezone)
        use24HourFormat = try c.decodeIfPresent(Bool.self, forKey: .use24HourFormat)
        soundId = try c.decodeIfPresent(String.self, forKey: .soundId)
        vibrationEnabled = try c.decodeIfPresent(Bool.self, forKey: .vibrationEnabled)
    }
}
