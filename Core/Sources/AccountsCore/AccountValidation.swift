import Contracts
import Foundation
import Wire

/// Input rules of the accounts service; each failure names the field (`CA016`).
public enum AccountValidation {
    /// The most devices one account registers (push fan-out per fire is bounded by it).
    public static let maxDevicesPerUser = 20
    public static let emailPattern = #"^[^\s@]+@([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$"#

    public static func email(_ raw: String) throws -> String {
        let email = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        // A local part without spaces or @; a domain of letter/digit/hyphen labels ending in a
        // TLD of letters (the same rule as `SignupRequest.email` in proto/openapi.yaml).
        // The length as JSON Schema counts it (code points, of the string as sent).
        guard raw.unicodeScalars.count <= 254, email.range(of: Self.emailPattern, options: .regularExpression) != nil else {
            throw ServiceError(.validationFailed, "email must be a valid email address")
        }
        return email
    }

    public static func password(_ password: String) throws {
        guard password.count >= 8 else { throw ServiceError(.validationFailed, "password must be at least 8 characters") }
        guard password.count <= 128 else { throw ServiceError(.validationFailed, "password must be at most 128 characters") }
    }

    public static func displayName(_ raw: String) throws -> String {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw ServiceError(.validationFailed, "displayName must not be empty") }
        guard name.count <= 80 else { throw ServiceError(.validationFailed, "displayName must be at most 80 characters") }
        try HumanText.check(name, field: "displayName")
        return name
    }

    public static func timezone(_ zone: String, field: String) throws {
        guard TimeZone(identifier: zone) != nil else {
            throw ServiceError(.validationFailed, "\(field) \"\(zone)\" is not an IANA time zone")
        }
    }

    @discardableResult
    public static func platform(_ platform: String, field: String = "platform") throws -> DevicePlatform {
        guard let p = DevicePlatform(rawValue: platform) else {
            throw ServiceError(.validationFailed, "\(field) must be ios, android or web")
        }
        return p
    }

    public static func short(_ value: String, field: String, max: Int) throws {
        guard value.count <= max else { throw ServiceError(.validationFailed, "\(field) must be at most \(max) characters") }
    }

    public static func url(_ value: String, field: String) throws {
        guard value.count <= 2048, let u = URL(string: value), let scheme = u.scheme, ["http", "https"].contains(scheme), u.host != nil else {
            throw ServiceError(.validationFailed, "\(field) must be an http(s) URL")
        }
    }

    /// Refuses a webhook URL that points inside the deployment (server-side request forgery):
    /// `CA016` with ``WebhookAddress/registrationProblem(_:)``'s message, which names `webhookUrl`.
    public static func webhookDestination(_ url: String) throws {
        if let problem = WebhookAddress.registrationProblem(url) {
            throw ServiceError(.validationFailed, problem)
        }
    }

    public static func settings(_ s: UserSettings) throws {
        guard (1...10_080).contains(s.defaultSnoozeMinutes) else {
            throw ServiceError(.validationFailed, "settings.defaultSnoozeMinutes must be 1...10080")
        }
        guard (1...168).contains(s.preAlarmWarningHours) else {
            throw ServiceError(.validationFailed, "settings.preAlarmWarningHours must be 1...168")
        }
        try timezone(s.timezone, field: "settings.timezone")
        guard !s.soundId.isEmpty, s.soundId.count <= 64 else {
            throw ServiceError(.validationFailed, "settings.soundId must be 1...64 characters")
        }
    }

    /// A device as stored: its provider filled in and every field checked. A `webhookUrl` must
    /// also pass ``WebhookAddress/registrationProblem(_:)`` (no localhost, internal address,
    /// credentials or low port) unless `allowPrivateWebhooks` (`CHRONIR_WEBHOOK_ALLOW_PRIVATE`).
    public static func device(_ d: DeviceUpsert, allowPrivateWebhooks: Bool) throws -> DeviceUpsert {
        var d = d
        guard d.deviceId.range(of: #"^[A-Za-z0-9._:-]{1,128}$"#, options: .regularExpression) != nil else {
            throw ServiceError(.validationFailed, "deviceId must be 1...128 characters of letters, digits, '.', '_', ':' or '-'")
        }
        let platform = try platform(d.platform)
        var provider = platform.defaultPushProvider
        if let named = d.pushProvider {
            guard let p = PushProviderKind(rawValue: named) else {
                throw ServiceError(.validationFailed, "pushProvider must be apns, fcm or webhook")
            }
            provider = p
        }
        d.pushProvider = provider.rawValue
        if let token = d.pushToken {
            guard !token.isEmpty, token.count <= 4096 else { throw ServiceError(.validationFailed, "pushToken must be 1...4096 characters") }
        }
        if provider == .webhook, d.webhookUrl == nil {
            throw ServiceError(.validationFailed, "webhookUrl is required for the webhook provider")
        }
        if let url = d.webhookUrl {
            try self.url(url, field: "webhookUrl")
            if !allowPrivateWebhooks { try webhookDestination(url) }
        }
        if let v = d.appVersion { try short(v, field: "appVersion", max: 32) }
        if let z = d.timezone { try timezone(z, field: "timezone") }
        if let l = d.locale { try short(l, field: "locale", max: 35) }
        return d
    }
}
