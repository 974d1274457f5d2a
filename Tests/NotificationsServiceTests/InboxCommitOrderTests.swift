import Foundation
@testable import NotificationsService
import Persistence
import Support
import Testing

/// A user's inbox ids commit in id order (issue 58): the live stream and every cursor pass an id
/// once, so a smaller id committed after a larger one was seen would never reach the client.
/// Four consumers insert for one user at once; here two transactions do, on real PostgreSQL.
@Suite("Inbox commit order")
struct InboxCommitOrderTests {
    @Test("an insert for a user whose inbox another open transaction wrote waits for it; another user's does not")
    func secondInsertWaitsForFirst() async throws {
        let url = try await TestDatabase.create("inboxorder")
        try await withDatabase(url: url, schema: "notifications") { db in
            _ = try await Migrator(database: db).migrate(NotificationsService.migrations)
            let store = NotificationStore(database: db)
            let logger = db.logger
            let firstInserted = AsyncGate()
            let release = AsyncGate()
            func visible() async throws -> [Int64] {
                try await db.query("SELECT id FROM inbox WHERE user_id = 'u' ORDER BY id").all(Int64.self)
            }
            // T1: a fire for u and v, in one batch (the scheduler consumer's path); held open.
            let first = Task {
                try await db.transaction { c in
                    let rows = try await store.insertInboxBatch(
                        users: ["u", "v"], events: ["fire-1", "fire-1"], types: ["alarm_fired", "alarm_fired"], titles: ["A", "A"],
                        bodies: ["", ""], datas: ["{}", "{}"], ats: [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 0)],
                        on: c, logger: logger)
                    await firstInserted.open()
                    await release.wait()
                    return rows.first { $0.user == "u" }!.id
                }
            }
            await firstInserted.wait()
            // T2: an invitation accepted, for u (another consumer's path), while T1 is open.
            let second = Task {
                try await db.transaction { c in
                    try await store.insertInbox(user: "u", event: "invite-1", type: "invitation_accepted", title: "B", body: "",
                                                data: "{}", on: c, logger: logger)!.id
                }
            }
            // T3: someone else's inbox is not held up by u's.
            let other = try await db.transaction { c in
                try await store.insertInbox(user: "w", event: "invite-2", type: "invitation_accepted", title: "C", body: "",
                                            data: "{}", on: c, logger: logger)!.id
            }
            #expect(other > 0)
            // While T1 is open nothing of u may be visible: a visible larger id would be read,
            // and passed, by a cursor before T1's smaller one commits.
            try await Task.sleep(for: .milliseconds(500))
            let early = try await visible()
            #expect(early.isEmpty, "u's inbox showed \(early) while a smaller id was uncommitted")
            await release.open()
            let firstId = try await first.value
            let secondId = try await second.value
            #expect(firstId < secondId, "T2 drew id \(secondId) before T1's \(firstId) committed")
            #expect(try await visible() == [firstId, secondId])
        }
    }
}

/// A one-shot gate: `wait` returns once `open` was called (before or after).
actor AsyncGate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func open() {
        isOpen = true
        for w in waiters { w.resume() }
        waiters = []
    }

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }
}
