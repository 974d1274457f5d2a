import NotificationsCore
import Contracts
import Crypto
import Foundation
@testable import NotificationsService
import Testing

/// What each event looks like on each provider (the payloads and answers are the providers', in
/// the service); what the renderers decide is tested in NotificationsCoreTests.
@Suite("Notification rendering")
struct NotificationRenderingTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("a pre-alarm warning is a standard notification: APNs priority content is 'active', FCM normal, no alarm channel")
    func preAlarmRespectsDoNotDisturb() throws {
        let n = NotificationRenderer.preAlarm(.init(alarmId: "a1", title: "Change HVAC Filter", occurrenceAt: now, offsetMinutes: 1440,
                                                    text: "Tomorrow: Change HVAC Filter at 9:00 AM", members: ["u1", "u2"], dueAt: now, firedAt: now))
        #expect(n.recipients == ["u1", "u2"])
        #expect(!n.content.urgent)
        #expect(n.content.body == "Tomorrow: Change HVAC Filter at 9:00 AM")
        let apns = try JSONSerialization.jsonObject(with: APNsProvider.payload(n.content)) as? [String: Any]
        let aps = apns?["aps"] as? [String: Any]
        #expect(aps?["interruption-level"] as? String == "active")
        #expect(aps?["sound"] as? String == "default")
        let fcm = FCMProvider.message(n.content, token: "t")
        let android = fcm["android"] as? [String: Any]
        #expect(android?["priority"] as? String == "normal")
        #expect((android?["notification"] as? [String: Any])?["channel_id"] as? String != "cycle_alarm_channel")
    }

    @Test("the webhook signature is HMAC-SHA256 over '<t>.<body>'")
    func signature() {
        let key = SymmetricKey(data: Data("secret".utf8))
        let sig = WebhookProvider.signature(secret: key, timestamp: 1_700_000_000, body: Data(#"{"a":1}"#.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Data(#"1700000000.{"a":1}"#.utf8), using: key).map { String(format: "%02x", $0) }.joined()
        #expect(sig == "t=1700000000,v1=\(mac)")
    }

    @Test("provider answers are classified: APNs BadDeviceToken and FCM UNREGISTERED drop the token; 429/5xx retry; 400 fails")
    func classification() {
        #expect(APNsProvider.classify(status: 400, reason: "BadDeviceToken", retryAfter: nil).outcome == .unregistered)
        #expect(APNsProvider.classify(status: 410, reason: "Unregistered", retryAfter: nil).outcome == .unregistered)
        #expect(APNsProvider.classify(status: 400, reason: "PayloadTooLarge", retryAfter: nil).outcome == .failed)
        #expect(APNsProvider.classify(status: 429, reason: "TooManyRequests", retryAfter: 5).retryAfter == 5)
        #expect(FCMProvider.classify(status: 404, reason: "UNREGISTERED", retryAfter: nil).outcome == .unregistered)
        #expect(FCMProvider.classify(status: 503, reason: "UNAVAILABLE", retryAfter: nil).outcome == .retry)
        #expect(FCMProvider.classify(status: 400, reason: "INVALID_ARGUMENT", retryAfter: nil).outcome == .failed)
        #expect(PushResult.classify(status: 204, reason: nil, retryAfter: nil).outcome == .sent)
    }
}
