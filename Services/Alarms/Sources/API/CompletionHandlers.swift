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
        router.on(AlarmsMethods.Complete.self) { req, ctx in
            try await complete(req, actor: try ctx.requireActor(), context: ctx.serviceContext)
        }
        router.on(AlarmsMethods.Completions.self) { q, ctx in
            try await CompletionQueries(store: store, missedWindow: missedWindow).history(q, actor: try ctx.requireActor())
        }
    }

    static let completionColumns = "id, alarm_id, user_id, user_display_name, status, scheduled_date, completed_at, note, on_time, created_at"

    static func decode<Rows: AsyncSequence>(_ rows: Rows) async throws -> [Completion] where Rows.Element == PostgresRow {
        var out: [Completion] = []
        for try await row in rows {
            let r = try row.decode((String, String, String?, String?, String, Date, Date, String?, Bool, Date).self)
            guard let status = CompletionStatus(rawValue: r.4) else { throw ServiceError.internal("unknown completion status \(r.4)") }
            out.append(Completion(id: r.0, alarmId: r.1, userId: r.2, userDisplayName: r.3, status: status, scheduledDate: r.5,
                                  completedAt: r.6, note: r.7, onTime: r.8, createdAt: r.9))
        }
        return out
    }

    func complete(_ req: CompletionCreate, actor: String, context: ServiceContext) async throws -> CompletionRecorded {
        guard let status = CompletionStatus(rawValue: req.status), status == .completed || status == .skipped else {
            throw ServiceError(.validationFailed, "status must be completed or skipped")
        }
        try AlarmRules.text(req.note, field: "note", max: 500)
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
        var completions = try await CompletionHandlers.decode(store.database.query("""
            SELECT \(unescaped: CompletionHandlers.completionColumns) FROM completions
            WHERE alarm_id = \(q.alarmId)
              AND (\(q.userId)::text IS NULL OR user_id = \(q.userId))
              AND (\(q.status)::text IS NULL OR status = \(q.status))
              AND (\(q.from)::timestamptz IS NULL OR scheduled_date >= \(q.from))
              AND (\(q.to)::timestamptz IS NULL OR scheduled_date < \(q.to))
              AND (\(cursorTime)::timestamptz IS NULL OR (completed_at, id) < (\(cursorTime), \(cursorID)))
            ORDER BY completed_at DESC, id DESC LIMIT \(limit + 1)
            """))
        var next: String? = nil
        if completions.count > limit {
            completions.removeLast()
            let last = completions[completions.count - 1]
            next = (try? JSONCoding.encode(Cursor(t: Int64((last.completedAt.timeIntervalSince1970 * 1000).rounded()), i: last.id)))?
                .base64EncodedString()
        }
        return CompletionPage(completions: completions, nextCursor: next, streak: try await streak(alarmId: q.alarmId))
    }

    /// Consecutive most recent occurrences completed on time (US-5.2).
    func streak(alarmId: String) async throws -> Int {
        let rows = try await store.database.query("""
            SELECT status, on_time FROM completions WHERE alarm_id = \(alarmId) ORDER BY scheduled_date DESC LIMIT 10000
            """)
        var n = 0
        for try await (status, onTime) in rows.decode((String, Bool).self) {
            guard status == CompletionStatus.completed.rawValue, onTime else { break }
            n += 1
        }
        return n
    }
}
