import AlarmsCore
import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO
import Tracing

/// One request to mark an occurrence: what was asked, by whom, when it arrived, and the trace
/// it belongs to.
struct MarkRequest: Sendable {
    var request: CompletionCreate
    var actor: String
    var receivedAt: Date
    var context: ServiceContext

    /// The mark: `completed` or `skipped` (the handler refuses any other status).
    var status: CompletionStatus { request.status == CompletionStatus.skipped.rawValue ? .skipped : .completed }
}

/// Marks a batch of occurrences completed or skipped in one transaction of five round trips,
/// however many it holds (see ``GroupCommit``): lock the alarms in id order with their owners'
/// tiers and actors' names; read the logs that already exist for the occurrences asked for;
/// check and apply each mark in Swift in arrival order (two marks of one alarm see each other);
/// write the new logs, the alarms' changed columns, their events (one per mark, carrying the
/// alarm's new state) and the feed in one statement.
/// Each request gets the answer it would get alone: a repeat of an occurrence already marked
/// (before or earlier in the batch) gets the first log and `created: false`.
struct CompletionBatch: Sendable {
    let store: AlarmStore
    let changes: AlarmChanges
    let outbox: OutboxWriter
    let missedWindow: Duration

    /// An occurrence was marked meanwhile by a path the batch did not foresee: the batch rolls
    /// back and its marks are made one by one.
    struct MarkedMeanwhile: Error {}

    private struct Key: Hashable {
        var alarmId: String
        var occurrence: Date
    }

    /// The answers of `batch`, in order. A batch that PostgreSQL refused as a whole (an error
    /// a mark could cause) is made again one mark per transaction, so the failure stays with the
    /// mark that causes it. A batch that could not reach the database at all fails every mark
    /// at once: retrying 500 marks one by one against a database that is down would hold the
    /// service for 500 connection timeouts.
    func record(_ batch: [MarkRequest]) async -> [Result<CompletionRecorded, any Error>] {
        do {
            let (answers, _) = try await outbox.transaction(wakes: { $0.1 }) { c in try await mark(batch, on: c) }
            return answers
        } catch {
            guard batch.count > 1, Self.markCouldCause(error) else { return batch.map { _ in .failure(error) } }
            store.logger.warning("a batch of marks failed as a whole; making them one by one",
                                 metadata: ["marks": "\(batch.count)", "error": "\(error)"])
            var answers: [Result<CompletionRecorded, any Error>] = []
            for m in batch { answers += await record([m]) }
            return answers
        }
    }

    /// Whether one mark of a batch could have caused `error`: a mark the batch did not foresee,
    /// or a statement PostgreSQL answered with an error (not a lost or refused connection).
    static func markCouldCause(_ error: any Error) -> Bool {
        if error is MarkedMeanwhile { return true }
        return (error as? PSQLError)?.serverInfo != nil
    }

    /// The batch's transaction: its answers, and whether it wrote anything.
    private func mark(_ batch: [MarkRequest], on c: PostgresConnection) async throws -> ([Result<CompletionRecorded, any Error>], Bool) {
        let targets = try await store.lockForMarks(alarmIds: batch.map(\.request.alarmId), actors: batch.map(\.actor), on: c)
        var asked: [Key] = []
        for (i, m) in batch.enumerated() {
            if let t = targets[i], let occurrence = m.request.scheduledDate ?? t.alarm.nextFireDate {
                asked.append(Key(alarmId: t.alarm.id, occurrence: occurrence))
            }
        }
        var marked: [Key: Completion] = [:]
        let requestIds = batch.compactMap(\.request.completionId)
        var byId: [String: Completion] = [:]
        for log in try await store.completions(of: asked.map(\.alarmId), at: asked.map(\.occurrence), ids: requestIds, on: c) {
            marked[Key(alarmId: log.alarmId, occurrence: log.scheduledDate)] = log
            byId[log.id] = log
        }
        var before: [String: Alarm] = [:]
        var now: [String: Alarm] = [:]
        var logs: [Completion] = []
        var events: [Envelope] = []
        var answers: [Result<CompletionRecorded, any Error>] = []
        for (i, m) in batch.enumerated() {
            do {
                guard let t = targets[i] else { throw AlarmHandlers.notFound(m.request.alarmId) }
                let a = now[t.alarm.id] ?? t.alarm
                if let id = m.request.completionId, let log = byId[id] {
                    // This very request, retried after the replica that first took it died (or
                    // its answer was lost): the log it wrote, answered as the first time.
                    guard a.isVisible(to: m.actor), a.deletedAt == nil else { throw AlarmHandlers.notFound(m.request.alarmId) }
                    guard log.alarmId == a.id, log.userId == m.actor, log.status == m.status else {
                        throw ServiceError(.alreadyExists, "completionId belongs to another mark")
                    }
                    answers.append(.success(CompletionRecorded(completion: log, alarm: a, created: true)))
                    continue
                }
                let (key, next, at) = try check(m, on: a) { marked[Key(alarmId: a.id, occurrence: $0)] != nil }
                let first = marked[key]
                if let first, !first.status.unmarked {
                    answers.append(.success(CompletionRecorded(completion: first, alarm: a, created: false)))
                    continue
                }
                // A first mark, or a late one over the `missed` log the window left (kept in place).
                let (log, n) = apply(m, occurrence: key.occurrence, at: at, to: a, next: next, actorName: t.actorName,
                                     window: t.missedWindowMinutes, replacing: first)
                marked[key] = log
                byId[log.id] = log
                logs.append(log)
                events.append(try changes.markEvent(after: n, marked: log, ownerTier: t.ownerTier, missedWindowMinutes: t.missedWindowMinutes,
                                                            actor: m.actor, context: m.context))
                if before[a.id] == nil { before[a.id] = a }
                now[a.id] = n
                answers.append(.success(CompletionRecorded(completion: log, alarm: n, created: true)))
            } catch {
                answers.append(.failure(error))
            }
        }
        guard !logs.isEmpty else { return (answers, false) }
        let alarms = now.values.sorted { $0.id < $1.id }
        let feed = alarms.map { AlarmChanges.feedChange(before: before[$0.id], after: $0) }
        let inserted = try await store.recordMarks(logs, alarms: alarms, events: outbox.rows(events), feed: feed, on: c)
        guard inserted == logs.count else { throw MarkedMeanwhile() }
        return (answers, true)
    }

    /// The occurrence `m` marks on alarm `a` as it stands, checked against its schedule, the
    /// alarm's next occurrence after it, and the time the mark is recorded at (the device's,
    /// checked).
    private func check(_ m: MarkRequest, on a: Alarm, logged: (Date) -> Bool) throws -> (Key, Date??, Date) {
        guard a.isVisible(to: m.actor), a.deletedAt == nil else { throw AlarmHandlers.notFound(m.request.alarmId) }
        let (occurrence, next) = try AlarmLifecycle.markedOccurrence(m.request.scheduledDate, on: a, now: m.receivedAt, logged: logged)
        let at = try AlarmLifecycle.markTime(m.request.completedAt, occurrence: occurrence, on: a, receivedAt: m.receivedAt)
        return (Key(alarmId: a.id, occurrence: occurrence), next, at)
    }

    /// The new log of `m`, marked at `at`, and the alarm after it. `replacing`: the `missed`
    /// log of the occurrence a late mark turns into its completion or skip (same id, its
    /// snoozes kept, `lateAt` set). `window`: the alarm's group's pending window in minutes, if
    /// it sets one.
    private func apply(_ m: MarkRequest, occurrence: Date, at: Date, to a: Alarm, next: Date??, actorName: String?, window: Int?,
                       replacing missed: Completion?) -> (Completion, Alarm) {
        let onTime = AlarmLifecycle.onTime(at, occurrence: occurrence,
                                           window: window.map { TimeInterval($0) * 60 } ?? Double(missedWindow.components.seconds),
                                           receivedAt: m.receivedAt)
        let snoozes = missed?.snoozeCount ?? (occurrence == a.nextFireDate ? a.snoozeCount : 0)
        let log = Completion(
            id: missed?.id ?? m.request.completionId ?? UUIDv7.string(), alarmId: a.id, userId: m.actor, userDisplayName: actorName, status: m.status,
            scheduledDate: occurrence, completedAt: at, note: m.request.note, onTime: onTime,
            createdAt: missed?.createdAt ?? m.receivedAt, snoozeCount: snoozes, lateAt: missed == nil ? nil : m.receivedAt
        )
        return (log, AlarmLifecycle.marked(a, status: m.status, at: at, next: next, changedAt: m.receivedAt))
    }
}
