import Foundation

/// What a device runs.
public enum DevicePlatform: String, Codable, Sendable, CaseIterable {
    case ios, android, web

    /// Where its pushes go unless the device names a provider.
    public var defaultPushProvider: PushProviderKind {
        switch self {
        case .ios: .apns
        case .android: .fcm
        case .web: .webhook
        }
    }
}

/// Who carries a device's pushes.
public enum PushProviderKind: String, Codable, Sendable, CaseIterable {
    case apns, fcm, webhook
}

extension Device {
    /// Where this device's pushes go: the provider it names, else its platform's default (a
    /// platform or provider the backend does not know goes to the webhook).
    public var provider: PushProviderKind {
        pushProvider.flatMap(PushProviderKind.init(rawValue:)) ?? DevicePlatform(rawValue: platform)?.defaultPushProvider ?? .webhook
    }
}

/// A device of a user and where its pushes go (`users/{uid}/devices/{deviceId}`, §3.1).
public struct Device: Codable, Sendable, Equatable {
    public var deviceId: String
    /// `ios`, `android` or `web`.
    public var platform: String
    /// `apns`, `fcm` or `webhook`; defaults from the platform.
    public var pushProvider: String?
    /// The APNs device token or FCM registration token.
    public var pushToken: String?
    /// For `webhook`: the HTTPS URL that receives pushes.
    public var webhookUrl: String?
    public var appVersion: String?
    public var timezone: String?
    public var locale: String?
    public var createdAt: Date
    public var updatedAt: Date

    public init(deviceId: String, platform: String, pushProvider: String?, pushToken: String?, webhookUrl: String?,
                appVersion: String?, timezone: String?, locale: String?, createdAt: Date, updatedAt: Date) {
        self.deviceId = deviceId
        self.platform = platform
        self.pushProvider = pushProvider
        self.pushToken = pushToken
        self.webhookUrl = webhookUrl
        self.appVersion = appVersion
        self.timezone = timezone
        self.locale = locale
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// `PUT /v1/me/devices/{deviceId}`: registers or updates a device.
public struct DeviceUpsert: Codable, Sendable {
    public var deviceId: String
    public var platform: String
    public var pushProvider: String?
    public var pushToken: String?
    public var webhookUrl: String?
    public var appVersion: String?
    public var timezone: String?
    public var locale: String?

    public init(deviceId: String, platform: String, pushProvider: String? = nil, pushToken: String? = nil,
                webhookUrl: String? = nil, appVersion: String? = nil, timezone: String? = nil, locale: String? = nil) {
        self.deviceId = deviceId
        self.platform = platform
        self.pushProvider = pushProvider
        self.pushToken = pushToken
        self.webhookUrl = webhookUrl
        self.appVersion = appVersion
        self.timezone = timezone
        self.locale = locale
    }
}
