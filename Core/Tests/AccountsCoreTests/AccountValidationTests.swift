import AccountsCore
import Contracts
import Foundation
import Testing
import Wire

/// The accounts service's input rules (``AccountValidation``), without the service: each
/// refusal is `CA016` and names its field; what passes comes back normalized.
@Suite("Account validation")
struct AccountValidationTests {
    /// The field a refusal names, or nil when `body` passed.
    static func refusal(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let e as ServiceError {
            return e.code == .validationFailed ? e.message : "not CA016: \(e)"
        } catch {
            return "not a ServiceError: \(error)"
        }
    }

    @Test("addresses sign-up takes, trimmed", arguments: [
        ("ada@example.com", "ada@example.com"),
        ("  ada@example.com\n", "ada@example.com"),
        ("a.b+tag@mail.example.co.uk", "a.b+tag@mail.example.co.uk"),
        ("x@xn--bcher-kva.example", "x@xn--bcher-kva.example"),
        ("o'neil@example.museum", "o'neil@example.museum"),
    ])
    func emailsTaken(raw: String, stored: String) throws {
        #expect(try AccountValidation.email(raw) == stored)
    }

    @Test("addresses sign-up refuses", arguments: [
        "", "ada", "ada@", "@example.com", "ada@example", "ada@example.c", "ada @example.com", "ada@@example.com",
        "ada@-example.com", "ada@example-.com", "ada@exa_mple.com", "ada@example.123",
        String(repeating: "a", count: 250) + "@example.com",
    ])
    func emailsRefused(raw: String) {
        #expect(Self.refusal { _ = try AccountValidation.email(raw) } == "email must be a valid email address")
    }

    @Test("passwords: 8 to 128 characters", arguments: [
        (7, "password must be at least 8 characters"), (8, nil), (128, nil), (129, "password must be at most 128 characters"),
    ] as [(Int, String?)])
    func passwords(length: Int, refusal: String?) {
        #expect(Self.refusal { try AccountValidation.password(String(repeating: "p", count: length)) } == refusal)
    }

    @Test("display names: trimmed, 1 to 80 characters, human text only", arguments: [
        (" Ada ", nil), ("", "displayName must not be empty"), ("   ", "displayName must not be empty"),
        (String(repeating: "n", count: 80), nil), (String(repeating: "n", count: 81), "displayName must be at most 80 characters"),
    ] as [(String, String?)])
    func displayNames(raw: String, refusal: String?) {
        #expect(Self.refusal { _ = try AccountValidation.displayName(raw) } == refusal)
    }

    @Test("a display name with a control character is refused and names its field")
    func displayNameControl() {
        let refusal = Self.refusal { _ = try AccountValidation.displayName("Ada\u{0007}") }
        #expect(refusal?.contains("displayName") == true, "\(refusal ?? "passed")")
    }

    @Test("time zones: IANA names only", arguments: [
        ("Europe/Paris", true), ("UTC", true), ("America/Argentina/Buenos_Aires", true), ("Mars/Olympus", false), ("", false),
    ])
    func timezones(zone: String, valid: Bool) {
        #expect((Self.refusal { try AccountValidation.timezone(zone, field: "tz") } == nil) == valid)
    }

    @Test("platforms: ios, android, web", arguments: [
        ("ios", DevicePlatform.ios as DevicePlatform?), ("android", .android), ("web", .web), ("iOS", nil), ("windows", nil), ("", nil),
    ])
    func platforms(raw: String, platform: DevicePlatform?) {
        #expect((try? AccountValidation.platform(raw)) == platform)
    }

    @Test("a device gets its platform's provider unless it names one; each field is checked", arguments: [
        (DeviceUpsert(deviceId: "d1", platform: "ios", pushToken: "t"), "apns" as String?),
        (DeviceUpsert(deviceId: "d1", platform: "android", pushToken: "t"), "fcm"),
        (DeviceUpsert(deviceId: "d1", platform: "web", webhookUrl: "https://hooks.example.com/x"), "webhook"),
        (DeviceUpsert(deviceId: "d1", platform: "ios", pushProvider: "webhook", webhookUrl: "https://hooks.example.com/x"), "webhook"),
        (DeviceUpsert(deviceId: "bad id", platform: "ios"), nil),
        (DeviceUpsert(deviceId: String(repeating: "d", count: 129), platform: "ios"), nil),
        (DeviceUpsert(deviceId: "d1", platform: "ios", pushProvider: "carrier-pigeon"), nil),
        (DeviceUpsert(deviceId: "d1", platform: "web"), nil),
        (DeviceUpsert(deviceId: "d1", platform: "ios", pushToken: ""), nil),
        (DeviceUpsert(deviceId: "d1", platform: "ios", pushToken: String(repeating: "t", count: 4097)), nil),
        (DeviceUpsert(deviceId: "d1", platform: "web", webhookUrl: "ftp://hooks.example.com/x"), nil),
        (DeviceUpsert(deviceId: "d1", platform: "web", webhookUrl: "https://127.0.0.1/x"), nil),
        (DeviceUpsert(deviceId: "d1", platform: "ios", appVersion: String(repeating: "9", count: 33)), nil),
        (DeviceUpsert(deviceId: "d1", platform: "ios", timezone: "Nowhere/Else"), nil),
        (DeviceUpsert(deviceId: "d1", platform: "ios", locale: String(repeating: "l", count: 36)), nil),
    ])
    func devices(device: DeviceUpsert, provider: String?) {
        let stored = try? AccountValidation.device(device, allowPrivateWebhooks: false)
        #expect(stored?.pushProvider == provider)
    }

    @Test("a webhook at an internal address passes only where private webhooks are allowed")
    func privateWebhooks() throws {
        let d = DeviceUpsert(deviceId: "d1", platform: "web", webhookUrl: "https://127.0.0.1:8443/hook")
        #expect(throws: ServiceError.self) { try AccountValidation.device(d, allowPrivateWebhooks: false) }
        #expect(try AccountValidation.device(d, allowPrivateWebhooks: true).pushProvider == "webhook")
    }

    @Test("settings: snooze 1…10080 minutes, warnings 1…168 hours, an IANA zone, a sound of 1…64 characters", arguments: [
        (10, 24, "UTC", "default", nil as String?),
        (0, 24, "UTC", "default", "settings.defaultSnoozeMinutes must be 1...10080"),
        (10_081, 24, "UTC", "default", "settings.defaultSnoozeMinutes must be 1...10080"),
        (10, 0, "UTC", "default", "settings.preAlarmWarningHours must be 1...168"),
        (10, 169, "UTC", "default", "settings.preAlarmWarningHours must be 1...168"),
        (10, 24, "Atlantis/Capital", "default", "settings.timezone \"Atlantis/Capital\" is not an IANA time zone"),
        (10, 24, "UTC", "", "settings.soundId must be 1...64 characters"),
    ])
    func settings(snooze: Int, warning: Int, zone: String, sound: String, refusal: String?) {
        var s = UserSettings()
        s.defaultSnoozeMinutes = snooze
        s.preAlarmWarningHours = warning
        s.timezone = zone
        s.soundId = sound
        #expect(Self.refusal { try AccountValidation.settings(s) } == refusal)
    }
}
