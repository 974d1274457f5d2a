import Contracts
import Foundation
import Messaging
import Persistence
import PostgresNIO

/// The SQL of completion logs outside the mark batches (those are in `MarkStore.swift`): history, streaks and
/// the logs of occurrences nobody marked.
extension AlarmStore {
    /// The columns every completion query selects, in the order ``decodeCompletions(_:)`` reads.
    static let completionColumns = """
        id, alarm_id, user_id, user_display_name, status, scheduled_date, completed_at, note, on_time, created_at, snooze_count, late_at
        """

    /// Reads completion rows selected with ``completionColumns``.
    static func decodeCompletions<Rows: AsyncSequence>(_ rows: Rows) async throws -> [Completion] where Rows.Element == PostgresRow {
        var out: [Completion] = []
        for try await row in rows {
            let r = try row.decode((String, String, String?, String?, String, Date, Date, String?, Bool, Date, Int32, Date?).self)
            guard let status = CompletionStatus(rawValue: r.4) else { throw ServiceError.internal("unknown completion status \(r.4)") }
            out.append(Completion(id: r.0, alarmId: r.1, userId: r.2, userDisplayName: r.3, status: status, scheduledDate: r.5,
                                  completedAt: r.6, note: r.7, onTime: r.8, createdAt: r.9,
                                  snoozeCount: Int(r.10), lateAt: r.11))
        }
        return out
    }

    /// A page of `alarmId`'s completion history, newest first (completion time, then id): only
    /// those by `userId`, of `status`, of occurrences in [`from`, `to`) where given, and before
    /// the position (`cursorTime`, `cursorID`) when `cursorTime` is set; at most `limit` rows.
    func completionHistory(alarmId: String, userId: String?, status: String?, from: Date?, to: Date?,
                           cursorTime: Date?, cursorID: String, limit: Int) async throws -> [Completion] {
        var q = try ConditionalQuery("SELECT \(Self.completionColumns) FROM completions WHERE alarm_id = {}", alarmId)
        if let userId { try q.and("user_id = {}", userId) }
        if let status { try q.and("status = {}", status) }
        if let from { try q.and("scheduled_date >= {}", from) }
        if let to { try q.and("scheduled_date < {}", to) }
        if let cursorTime { try q.and("(completed_at, id) < ({}, {})", cursorTime, cursorID) }
        try q.append("ORDER BY completed_at DESC, id DESC LIMIT {}", limit)
        return try await Self.decodeCompletions(database.query(q.query))
    }

    /// `alarmId`'s most recent completion (by completion time), nil when it has none.
    func lastCompletion(alarmId: String) async throws -> Completion? {
        try await Self.decodeCompletions(database.query("""
            SELECT \(unescaped: Self.completionColumns) FROM completions WHERE alarm_id = \(alarmId) AND status = 'completed'
            ORDER BY completed_at DESC, id DESC LIMIT 1
            """)).first
    }

    /// How many logs `alarmId` has.
    func completionCount(alarmId: String) async throws -> Int {
        Int(try await database.query("SELECT count(*) FROM completions WHERE alarm_id = \(alarmId)").first(Int64.self) ?? 0)
    }

    /// How many of `alarmId`'s most recent occurrences in a row were completed on time: reads
    /// its latest logs (at most 10 000) newest first and stops at the first that was not.
    func onTimeStreak(alarmId: String) async throws -> Int {
        let rows = try await database.query("""
            SELECT status, on_time FROM completions WHERE alarm_id = \(alarmId) ORDER BY scheduled_date DESC LIMIT 10000
            """)
        var n = 0
        for try await (status, onTime) in rows.decode((String, Bool).self) {
            guard status == CompletionStatus.completed.rawValue, onTime else { break }
            n += 1
        }
        return n
    }

    /// Whether `alarmId`'s occurrence at `occurrence` has a log.
    func hasCompletion(alarmId: String, occurrence: Date, on c: PostgresConnection) async throws -> Bool {
        try await c.query("""
            SELECT 1 FROM completions WHERE alarm_id = \(alarmId) AND scheduled_date = \(occurrence)
            """, logger: logger).first(Int32.self) != nil
    }

    /// Logs an occurrence nobody marked (`missed` or `snoozed_expired`: no user, no note, not on
    /// time); nothing when the occurrence already has a log.
    func insertUnmarkedCompletion(_ completion: Completion, on c: PostgresConnection) async throws {
        try await c.query("""
            INSERT INTO completions (id, alarm_id, user_id, user_display_name, status, scheduled_date, completed_at, note, on_time, created_at,
                snooze_count)
            VALUES (\(completion.id), \(completion.alarmId), NULL, NULL, \(completion.status.rawValue), \(completion.scheduledDate),
                \(completion.completedAt), NULL, false, \(completion.createdAt), \(Int32(completion.snoozeCount)))
            ON CONFLICT (alarm_id, scheduled_date) DO NOTHING
            """, logger: logger)
    }
}
