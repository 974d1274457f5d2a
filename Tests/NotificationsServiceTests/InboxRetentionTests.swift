import Foundation
import NotificationsService
import Persistence
import PostgresNIO
import Support
@testable import SuiteSupport
import Testing

/// The notifications retention sweeper (`RetentionSweeper`, `CHRONIR_INBOX_RETENTION`, run every
/// `CHRONIR_INBOX_SWEEP_INTERVAL`) on the running service: inbox entries, finished deliveries and
/// attempts older than the retention go; younger ones and deliveries still pending stay.
@Suite("Inbox retention sweep")
struct InboxRetentionTests {
    @Test("entries, finished deliveries and attempts past the retention are deleted; younger ones and pending deliveries are kept")
    func sweepsWhatIsPastRetention() async throws {
        try await withTestSuite(label: "inboxretention", start: { s in
            // Kept one hour (the default, 30 days, would keep everything below), swept every 200 ms.
            try s.start("notifications", migrations: NotificationsService.migrations,
                        extra: ["CHRONIR_INBOX_RETENTION": "1h", "CHRONIR_INBOX_SWEEP_INTERVAL": "200ms"], build: NotificationsService.build)
        }) { s in
            func count(_ sql: String) async -> Int? {
                try? await s.inDatabase("notifications") { db in
                    try await db.query(PostgresQuery(unsafeSQL: sql)).first(Int.self)
                }
            }
            #expect(await eventually(timeout: .seconds(30)) { await count("SELECT count(*)::int FROM inbox") != nil },
                    "the notifications schema was not migrated")

            // Rows two hours old (past the retention) and half an hour old (within it), as the
            // service writes them; the old pending delivery is not due (the worker leaves it alone).
            try await s.inDatabase("notifications") { db in
                try await db.query("""
                    INSERT INTO inbox (user_id, event_id, type, title, body, data, created_at) VALUES
                        ('u-retained', 'ev-old', 'alarm_fired', 'Chronir: Old', 'It''s time', '{}', now() - interval '2 hours'),
                        ('u-retained', 'ev-recent', 'alarm_fired', 'Chronir: Recent', 'It''s time', '{}', now() - interval '30 minutes')
                    """).drain()
                try await db.query("""
                    INSERT INTO deliveries (event_id, inbox_id, user_id, device_id, provider, webhook_url, content, state, attempts,
                                            next_attempt_at, created_at, finished_at) VALUES
                        ('ev-old', 1, 'u-retained', 'sent-old', 'webhook', 'https://localhost/hook', '{}', 'sent', 1,
                         now() - interval '2 hours', now() - interval '2 hours', now() - interval '2 hours'),
                        ('ev-old', 1, 'u-retained', 'pending-old', 'webhook', 'https://localhost/hook', '{}', 'pending', 0,
                         now() + interval '1 day', now() - interval '2 hours', NULL),
                        ('ev-recent', 2, 'u-retained', 'failed-recent', 'webhook', 'https://localhost/hook', '{}', 'failed', 5,
                         now() - interval '30 minutes', now() - interval '30 minutes', now() - interval '30 minutes')
                    """).drain()
                try await db.query("""
                    INSERT INTO attempts (delivery_id, attempt, provider, status, outcome, latency_ms, at) VALUES
                        (1001, 1, 'webhook', 200, 'sent', 3, now() - interval '2 hours'),
                        (1002, 1, 'webhook', 503, 'retry', 3, now() - interval '30 minutes')
                    """).drain()
            }

            // The positive marker: every row past the retention is gone (the three statements of a sweep).
            let swept = await eventually(timeout: .seconds(20)) {
                let inbox = await count("SELECT count(*)::int FROM inbox WHERE event_id = 'ev-old'")
                let deliveries = await count("SELECT count(*)::int FROM deliveries WHERE device_id = 'sent-old'")
                let attempts = await count("SELECT count(*)::int FROM attempts WHERE delivery_id = 1001")
                return inbox == 0 && deliveries == 0 && attempts == 0
            }
            #expect(swept, "rows past the retention are still there")
            // What the same statements had to keep.
            #expect(await count("SELECT count(*)::int FROM inbox WHERE event_id = 'ev-recent'") == 1, "an entry within the retention was deleted")
            #expect(await count("SELECT count(*)::int FROM deliveries WHERE device_id = 'pending-old' AND state = 'pending'") == 1,
                    "a pending delivery was deleted")
            #expect(await count("SELECT count(*)::int FROM deliveries WHERE device_id = 'failed-recent'") == 1,
                    "a delivery finished within the retention was deleted")
            #expect(await count("SELECT count(*)::int FROM attempts WHERE delivery_id = 1002") == 1, "an attempt within the retention was deleted")
        }
    }
}
