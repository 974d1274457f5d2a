import Contracts
import Foundation
import Messaging
import NotificationsService
import PostgresNIO
import SchedulerService
import Support
@testable import SuiteSupport
import Testing

/// Giving up on a push (`DeliveryWorker.settle`: a retryable answer to the last of
/// `CHRONIR_PUSH_MAX_TRIES` attempts is a failure): the delivery is marked failed after exactly
/// that many attempts and never sent again, through real services and a local APNs.
@Suite("Push retries give up")
struct PushGiveUpTests {
    @Test("a push answered 503 every time is tried CHRONIR_PUSH_MAX_TRIES times, marked failed, and not tried again")
    func givesUpAfterTheLastTry() async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        try await withTestSuite(label: "giveup", start: { s in
            try s.startCore()
            try s.start("scheduler", migrations: SchedulerService.migrations,
                        extra: ["CHRONIR_SCHEDULER_PARTITIONS": "16"], build: SchedulerService.build)
            // Three tries, at most 100 ms apart: a fourth try, if any, would come within moments.
            try s.start("notifications", migrations: NotificationsService.migrations,
                        extra: push.environment.merging(["CHRONIR_DELIVERY_POLL": "50ms", "CHRONIR_PUSH_MAX_TRIES": "3",
                                                         "CHRONIR_PUSH_RETRY_BASE": "50ms", "CHRONIR_PUSH_RETRY_MAX": "100ms"]) { $1 },
                        build: NotificationsService.build)
        }) { s in
            let u = try await s.signup("Unlucky")
            // APNs answers this token 503 (retry later) three times, then 200.
            push.script.withLock { $0 = ["ios-down": [503, 503, 503]] }
            let device = try await s.request(.PUT, "/v1/me/devices/iphone", token: u.token, json: ["platform": "ios", "pushToken": "ios-down"])
            #expect(device.status == 200 || device.status == 201, "\(device.text)")
            try await s.waitForDevices(u, count: 1)

            func alarm(_ title: String) async throws -> String {
                let created = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": title, "schedule": scheduleJSON("annual", day: 1)])
                return try #require(created.json["id"]?.stringValue, "\(created.text)")
            }
            func pushes(_ alarmId: String) -> [Int] {
                push.requests("apns").filter { $0.path == "/3/device/ios-down" && $0.json?["alarmId"] as? String == alarmId }.map(\.status)
            }
            func delivery(_ alarmId: String) async throws -> (state: String, attempts: Int, error: String?)? {
                try await s.inDatabase("notifications") { db -> (state: String, attempts: Int, error: String?)? in
                    let rows = try await db.query("""
                        SELECT state, attempts, last_error FROM deliveries
                        WHERE user_id = \(u.uid) AND device_id = 'iphone' AND content->'data'->>'alarmId' = \(alarmId)
                        """)
                    for try await (state, attempts, error) in rows.decode((String, Int32, String?).self) { return (state, Int(attempts), error) }
                    return nil
                }
            }

            // The first fire: three 503s, then the delivery is given up.
            let first = try await alarm("Gets no answer")
            try await s.fireAgain(first)
            var given: (state: String, attempts: Int, error: String?)?
            let failed = await eventually(timeout: .seconds(30)) {
                given = try? await delivery(first)
                return given?.state == "failed"
            }
            #expect(failed, "the delivery was not given up: \(String(describing: given)), apns \(pushes(first))")
            #expect(given?.attempts == 3)
            #expect(given?.error == "ServiceUnavailable", "the reason of the last answer: \(String(describing: given?.error))")
            #expect(pushes(first) == [503, 503, 503])
            let outcomes = try await s.inDatabase("notifications") { db in
                try await db.query("""
                    SELECT a.outcome FROM attempts a JOIN deliveries d ON d.id = a.delivery_id
                    WHERE d.user_id = \(u.uid) AND d.content->'data'->>'alarmId' = \(first) ORDER BY a.attempt
                    """).all(String.self)
            }
            #expect(outcomes == ["retry", "retry", "failed"])

            // The positive marker that a fourth try had its chance: a later fire to the same
            // device goes through the same worker and is sent (the script is used up: 200).
            let second = try await alarm("Gets through")
            try await s.fireAgain(second)
            #expect(await eventually(timeout: .seconds(30)) { (try? await delivery(second))?.state == "sent" },
                    "the later push was not sent: apns \(push.requests("apns").map { "\($0.path) \($0.status)" })")
            #expect(pushes(second) == [200])
            // The given-up delivery was not tried again (a fourth try would have been answered 200).
            #expect(pushes(first) == [503, 503, 503], "the given-up push was sent again")
            let after = try await delivery(first)
            #expect(after?.state == "failed" && after?.attempts == 3, "\(String(describing: after))")
        }
    }
}
