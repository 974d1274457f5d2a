import Contracts
import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO
import Schedules

/// Marking occurrences complete or skipped (§7): one log per alarm per occurrence; the alarm
/// moves on to its next occurrence.
struct CompletionHandlers: Sendable {
    let store: AlarmStore
    let changes: AlarmChanges
    let outbox: OutboxWriter
    let missedWindow: Duration

    var database: Database { store.database }

    func register(into router: inout RPCRouter) {
        router.on(AlarmsMethods.Complete.self) { req, ctx in try await complete(req, actor: try ctx.requireActor()) }
        router.on(AlarmsMethods.Completions.self) { q, ctx in
            try await CompletionQueries(store: store, missedWindow: missedWindow).history(q, actor: try ctx.requireActor())
        }
    }

    static let completionColumns = "id, alarm_id, user_id, user_display_name, status, scheduled_date, completed_at, note, on_time, created_at"

    static func decode(_ rows: PostgresRowSequence) async throws -> [Completion] {
        var out: [Completion] = []
        for try await r in rows.decode((String, String, String?, String?, String, Date, Date, String?, Bool, Date).self) {
            out.append(Completion(id: r.0, alarmId: r.1, userId: r.2, userDisplayName: r.3, status: r.4, scheduledDate: r.5,
                                  completedAt: r.6, note: r.7, onTime: r.8, createdAt: r.9))
        }
        return out
    }

    func complete(_ req: CompletionCreate, actor: String) async throws -> CompletionRecorded {
        guard req.status == "completed" || req.status == "skipped" else {
            throw ServiceError(.validationFailed, "status must be completed or skipped")
        }
        try AlarmRules.text(req.note, field: "note", max: 500)
        let result: CompletionRecorded = try await database.transaction { c in
            guard let (a, ownerTier, actorName) = try await store.lockForMark(req.alarmId, actor: actor, on: c),
                  a.isVisible(to: actor), a.deletedAt == nil else {
                throw AlarmHandlers.notFound(req.alarmId)
            }
            let compiled = try AlarmRules.compile(a.schedule)
            guard let occurrence = req.scheduledDate ?? a.nextFireDate else {
                throw ServiceError(.validationFailed, "alarm \(a.id) has no pending occurrence; give scheduledDate")
            }
            guard compiled.isOccurrence(occurrence) else {
                throw ServiceError(.validationFailed, "scheduledDate \(ISOTime.format(occurrence)) is not an occurrence of this alarm's schedule")
            }
            if let pending = a.nextFireDate, occurrence > pending {
                throw ServiceError(.validationFailed, "scheduledDate is later than the alarm's pending occurrence \(ISOTime.format(pending))")
            }
            let now = Date()
            let window = Double(missedWindow.components.seconds)
            let onTime = now.timeIntervalSince(occurrence) <= window
            let id = UUIDv7.string()
            // Nothing when this occurrence was already marked: a retried request gets the first answer.
            let inserted = try await c.prepared("""
                INSERT INTO completions (id, alarm_id, user_id, user_display_name, status, scheduled_date, completed_at, note, on_time, created_at)
                VALUES (\(id), \(a.id), \(actor), \(actorName), \(req.status), \(occurrence), \(now), \(req.note), \(onTime), \(now))
                ON CONFLICT (alarm_id, scheduled_date) DO NOTHING
                RETURNING 1
                """, logger: store.logger).all(Int32.self)
            guard !inserted.isEmpty else {
                let existing = try await Self.decode(c.query("""
                    SELECT \(unescaped: Self.completionColumns) FROM completions WHERE alarm_id = \(a.id) AND scheduled_date = \(occurrence)
                    """, logger: store.logger))
                guard let existing = existing.first else { throw ServiceError(.internalError, "completion of \(a.id) vanished") }
                return CompletionRecorded(completion: existing, alarm: a, created: false)
            }
            let completion = Completion(
                id: id, alarmId: a.id, userId: actor, userDisplayName: actorName, status: req.status, scheduledDate: occurrence,
                completedAt: now, note: req.note, onTime: onTime, createdAt: now
            )
            var n = a
            if req.status == "completed" { n.lastCompletedDate = now }
            if let pending = a.nextFireDate, occurrence >= pending {
                n.nextFireDate = compiled.next(after: max(occurrence, now))
                if n.nextFireDate == nil { n.isActive = false }
            }
            n.version = a.version + 1
            n.updatedAt = now
            try await changes.recordMark(before: a, after: n, marked: completion, ownerTier: ownerTier, actor: actor, on: c)
            return CompletionRecorded(completion: completion, alarm: n, created: true)
        }
        if result.created { outbox.committed() }
        return result
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
        if let s = q.status, !["completed", "skipped", "missed", "snoozed_expired"].contains(s) {
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
            guard status == "completed", onTime else { break }
            n += 1
        }
        return n
    }
}
