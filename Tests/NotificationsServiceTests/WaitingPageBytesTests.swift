import Contracts
import Foundation
import Messaging
@testable import NotificationsService
import Persistence
import Support
import Testing

/// Issue 75: the gateway loads what waits for its instant at start (`notifications.waiting`,
/// 2 000 rows a page). The page was bounded by rows only: 2 000 rows of long titles passed the
/// 1 MiB frame limit, the reply was dropped, and the gateway asked again for ever.
@Suite("Waiting rows: pages bounded by bytes")
struct WaitingPageBytesTests {
    @Test("2 000 waiting rows of 600-byte texts come in pages under the asker's frame limit, every row once")
    func pagesFitTheFrame() async throws {
        let url = try await TestDatabase.create("waitingbytes")
        try await withDatabase(url: url, schema: "notifications") { db in
            _ = try await Migrator(database: db).migrate(NotificationsService.migrations)
            try await db.query("""
                INSERT INTO inbox (user_id, event_id, type, title, body, data, created_at)
                SELECT 'u' || (k % 50), 'fire-' || k, 'alarm_fired', repeat('t', 100), repeat('b', 500), '{}'::jsonb,
                       now() + interval '1 hour'
                FROM generate_series(1, 2000) AS k
                """)
            let handlers = InboxHandlers(store: NotificationStore(database: db))
            var after: Int64 = 0
            var seen: [Int64] = []
            var more = true
            var pages = 0
            while more {
                let page = try await handlers.waiting(.init(after: after, limit: 2_000))   // the default: 1 MiB
                let bytes = try JSONCoding.encode(page).count
                #expect(bytes < 1 << 20, "a page of \(page.notifications.count) rows is \(bytes) bytes")
                seen += page.notifications.map(\.id)
                after = page.notifications.last?.id ?? after
                more = page.hasMore
                pages += 1
                try #require(pages < 10)
            }
            #expect(seen.count == 2_000 && Set(seen).count == 2_000)
            #expect(pages >= 2)
        }
    }
}

/// Issue 75: after a gateway restart a resumed client's inbox read stops at a row waiting for
/// its instant, and the gateway loaded only the waiting rows: a later row of the same user,
/// already due (a completion written after a fire that still waits), was never sent.
@Suite("Waiting rows: what waits behind them")
struct WaitingBehindTests {
    @Test("the waiting list holds each waiting row and every later row of its user, and nothing of users with none waiting")
    func rowsBehindAWaitingRow() async throws {
        let url = try await TestDatabase.create("waitingbehind")
        try await withDatabase(url: url, schema: "notifications") { db in
            _ = try await Migrator(database: db).migrate(NotificationsService.migrations)
            func insert(_ user: String, _ event: String, at: String) async throws {
                try await db.query("""
                    INSERT INTO inbox (user_id, event_id, type, title, body, data, created_at)
                    VALUES (\(user), \(event), 'alarm_fired', 't', 'b', '{}'::jsonb, \(unescaped: at))
                    """)
            }
            try await insert("u", "before", at: "now() - interval '1 minute'")   // sent long ago
            try await insert("u", "fire", at: "now() + interval '1 hour'")       // waits
            try await insert("u", "completion", at: "now()")                     // due, behind the fire
            try await insert("v", "other", at: "now()")                          // nothing of v waits
            let list = try await NotificationStore(database: db).waiting(after: 0, rows: 100)
            #expect(list.map(\.eventId) == ["fire", "completion"])
        }
    }
}
