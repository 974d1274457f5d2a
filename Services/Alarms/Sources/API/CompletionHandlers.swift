import AlarmsCore
import Contracts
import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO
import Schedules
import Tracing

/// Marking occurrences complete or skipped (§7): one log per alarm per occurrence; the alarm
/// moves on to its next occurrence. Concurrent marks are collected into batches of one
/// transaction each (``CompletionBatch``): at most 2 batches run at once, of at most 500 marks.
struct CompletionHandlers: Sendable {
    let store: AlarmStore
    let missedWindow: Duration
    private let marks: GroupCommit<MarkRequest, CompletionRecorded>

    init(store: AlarmStore, changes: AlarmChanges, outbox: OutboxWriter, missedWindow: Duration) {
        self.store = store
        self.missedWindow = missedWindow
        let batch = CompletionBatch(store: store, changes: changes, outbox: outbox, missedWindow: missedWindow)
        marks = GroupCommit(maxBatch: 500, maxRunning: 2) { await batch.record($0) }
    }

    func register(into router: inout RPCRouter) {
        // Light: checks, then waits for its batch (which runs in the batch's own task).
        router.on(AlarmsMethods.Complete.self, placement: .socketThread) { req, ctx in
            try await complete(req, actor: try ctx.requireActor(), context: ctx.serviceContext)
        }
        router.on(AlarmsMethods.Completions.self) { q, ctx in
            try await CompletionQueries(store: store, missedWindow: missedWindow).history(q, actor: try ctx.requireActor())
        }
    }

    func complete(_ req: CompletionCreate, actor: String, context: ServiceContext) async throws -> CompletionRecorded {
        guard let status = CompletionStatus(rawValue: req.status), status == .completed || status == .skipped else {
            throw ServiceError(.validationFailed, "status must be completed or skipped")
        }
        try AlarmRules.text(req.note, field: "note", max: 500)
        if let id = req.completionId, id.isEmpty || id.utf8.count > 64 {
            throw ServiceError(.validationFailed, "completionId must be 1–64 characters")
        }
        return try await marks.submit(MarkRequest(request: req, actor: actor, receivedAt: Date(), context: context))
    }
}

/// History, streak and export of completions.
struct CompletionQueries: Sendable {
    let store: AlarmStore
    let missedWindow: Duration

    struct Cursor: Codable {
        var t: Int64
        var i: String
    }

    func history(_ q: CompletionQuery, actor: String) async throws -> CompletionPage {
        guard let alarm = try await store.load(q.alarmId), alarm.isVisible(to: actor), alarm.deletedAt == nil else {
            throw AlarmHandlers.notFound(q.alarmId)
        }
        let limit = q.limit ?? 50
        guard (1...500).contains(limit) else { throw ServiceError(.validationFailed, "limit must be 1–500") }
        if let s = q.status, CompletionStatus(rawValue: s) == nil {
            throw ServiceError(.validationFailed, "status must be completed, skipped, missed or snoozed_expired")
        }
        var cursorTime: Date? = nil
        var cursorID = ""
        if let text = q.cursor {
            guard let data = Data(base64Encoded: text), let c = try? JSONCoding.decoder().decode(Cursor.self, from: data) else {
                throw ServiceError(.validationFailed, "cursor is not one this API returned")
            }
            cursorTime = Date(timeIntervalSince1970: Double(c.t) / 1000)
            cursorID = c.i
        }
        var completions = try await store.completionHistory(alarmId: q.alarmId, userId: q.userId, status: q.status, from: q.from, to: q.to,
                                                            cursorTime: cursorTime, cursorID: cursorID, limit: limit + 1)
        var next: String? = nil
        if completions.count > limit {
            completions.removeLast()
            let last = completions[completions.count - 1]
            next = (try? JSONCoding.encode(Cursor(t: Int64((last.completedAt.timeIntervalSince1970 * 1000).rounded()), i: last.id)))?
                .base64EncodedString()
        }
        let streak = try await streak(alarmId: q.alarmId)
        // Free (US-5.2): the last completion only, "Last completed: Jan 15"; the rest is kept. A
        // shared alarm shows its history to the members of a paying owner.
        if try await store.bestTier(of: [actor, alarm.ownerId]) < .plus {
            let last = try await store.lastCompletion(alarmId: q.alarmId)
            let total = try await store.completionCount(alarmId: q.alarmId)
            return CompletionPage(completions: last.map { [$0] } ?? [], nextCursor: nil, streak: streak,
                                  historyLocked: true, hiddenCount: total - (last == nil ? 0 : 1))
        }
        return CompletionPage(completions: completions, nextCursor: next, streak: streak)
    }

    /// Consecutive most recent occurrences completed on time (US-5.2).
    func streak(alarmId: String) async throws -> Int {
        try await store.onTimeStreak(alarmId: alarmId)
    }
}
