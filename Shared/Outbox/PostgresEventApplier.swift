import Foundation
import Logging
import Messaging
import Persistence
import PostgresNIO
import Synchronization
import Tracing

/// Applies events in one transaction with the consumer's checkpoint: the checkpoint row is
/// locked first, so replicas consuming the same stream take turns and each event is applied
/// exactly once; event types the consumer ignores just advance the checkpoint, and an event it
/// cannot handle (a type or a payload version this build does not know) stops it there
/// (``ConsumerBlocked``) instead of being skipped.
///
/// A delivery of nothing but unhandled types (the invitations service sees every completion on
/// the alarms stream and handles only deletions) costs no transaction: the checkpoint moves in
/// memory, and is written with the next transaction, at a pause of the stream once it is a second
/// old (``settle(stream:)``; heartbeats make pauses), or once `maxUnwritten` events have passed.
/// A crash before that replays those events, which are skipped again.
public final class PostgresEventApplier: EventApplier {
    let database: Database
    let handlers: EventHandlers
    let telemetry: Telemetry
    let consumerName: String
    let afterCommit: @Sendable () -> Void
    private let maxUnwritten: Int64
    /// Per stream: events (`written`, `through`] were skipped in memory; `written` is the
    /// checkpoint the database held then.
    private let unwritten = Mutex<[String: (written: Int64, through: Int64, since: ContinuousClock.Instant)]>([:])
    private let crashBeforeCheckpoint: CrashFailpoint?
    private let idleTimeoutMs: Int

    /// `afterCommit` runs after each applied batch commits: wake this service's outbox relay
    /// there, so events the handlers wrote go out at once rather than at the relay's next poll.
    /// `idleTimeout`: how long a transaction holding the checkpoint's row lock may sit idle
    /// before PostgreSQL ends its session (`idle_in_transaction_session_timeout`, set for that
    /// transaction only): a replica paused inside one (SIGSTOP, a frozen VM, a debugger) then
    /// holds up the other replicas of its consumer for that long, not for ever.
    public init(database: Database, handlers: EventHandlers, telemetry: Telemetry, consumerName: String,
                maxUnwritten: Int64 = 5000, crashBeforeCheckpoint: CrashFailpoint? = nil, idleTimeout: Duration = .seconds(10),
                afterCommit: @escaping @Sendable () -> Void = {}) {
        self.crashBeforeCheckpoint = crashBeforeCheckpoint
        self.idleTimeoutMs = max(1, Int(idleTimeout.components.seconds * 1000 + idleTimeout.components.attoseconds / 1_000_000_000_000_000))
        self.database = database
        self.handlers = handlers
        self.telemetry = telemetry
        self.consumerName = consumerName
        self.maxUnwritten = maxUnwritten
        self.afterCommit = afterCommit
    }

    /// Whether a checkpoint read as `current` allows applying from `before` + 1: it is `before`,
    /// or it lies in a run this applier skipped in memory that ends at `before`.
    private func follows(_ current: Int64, before: Int64, stream: String) -> Bool {
        if current == before { return true }
        guard let skipped = unwritten.withLock({ $0[stream] }), skipped.through == before else { return false }
        return current >= skipped.written && current < before
    }

    private func written(_ stream: String, through seq: Int64) {
        unwritten.withLock { u in
            if let skipped = u[stream], skipped.through <= seq { u[stream] = nil }
        }
    }

    /// Skips a delivery of unhandled events in memory; false when it must be written now.
    private func skipInMemory(stream: String, _ first: DeliveredEvent, _ last: DeliveredEvent) -> Bool {
        unwritten.withLock { u in
            // A run that does not end where this delivery starts is stale: the consumer was told
            // another replica moved the checkpoint (to at least this delivery's start) since.
            let previous = u[stream].flatMap { $0.through == first.seq - 1 ? $0 : nil }
            let written = previous?.written ?? (first.seq - 1)
            guard last.seq - written < maxUnwritten else { return false }
            u[stream] = (written, last.seq, previous?.since ?? .now)
            return true
        }
    }

    /// Writes a checkpoint kept in memory for a second or more, unless another replica has moved
    /// past it.
    public func settle(stream: String) async throws {
        guard let skipped = unwritten.withLock({ $0[stream] }), skipped.since.duration(to: .now) >= .seconds(1) else { return }
        try await writeUnwritten(stream)
    }

    /// Writes the checkpoint kept in memory now (before stopping at an event, so the stored
    /// checkpoint is the one an operator's skip must follow).
    private func writeUnwritten(_ stream: String) async throws {
        guard let skipped = unwritten.withLock({ $0[stream] }) else { return }
        try await database.query("""
            INSERT INTO consumer_checkpoints AS c (stream, seq) VALUES (\(stream), \(skipped.through))
            ON CONFLICT (stream) DO UPDATE SET seq = excluded.seq, updated_at = now()
            WHERE c.seq >= \(skipped.written) AND c.seq < excluded.seq
            """).drain()
        written(stream, through: skipped.through)
    }

    public func forgetUnwritten(stream: String) {
        unwritten.withLock { $0[stream] = nil }
    }

    public func checkpoint(stream: String) async throws -> Int64 {
        try await database.query("SELECT seq FROM consumer_checkpoints WHERE stream = \(stream)").first(Int64.self) ?? 0
    }

    public func apply(stream: String, events: [DeliveredEvent]) async throws {
        // An event this build cannot handle stops the consumer there: what comes before it is
        // applied, its checkpoint written (even one kept in memory), and nothing after it.
        if let i = events.firstIndex(where: { handlers.cannotHandle($0.envelope) != nil }) {
            if i > 0 { try await apply(stream: stream, events: Array(events[..<i])) }
            try await writeUnwritten(stream)
            let e = events[i]
            throw ConsumerBlocked(stream: stream, seq: e.seq, type: e.envelope.type, version: e.envelope.version,
                                  reason: handlers.cannotHandle(e.envelope) ?? "")
        }
        guard let first = events.first, let last = events.last else { return }
        if !events.contains(where: { handlers.handles($0.envelope.type) }), skipInMemory(stream: stream, first, last) { return }
        do {
            try await applyInTransaction(stream: stream, events: events)
        } catch let error as PSQLError {
            if let refusal = Self.deterministicRefusal(error) { throw HandlerFailed(refusal) }
            throw error
        }
        written(stream, through: last.seq)
        afterCommit()
    }

    /// The refusal in `error` when PostgreSQL refused what a handler wrote in a way another try
    /// will not change: a data exception (class 22), an integrity constraint (23), a statement
    /// that cannot run (42) or a raised error (P0). Nil for anything that passes (a lost
    /// connection, a serialization failure or deadlock, a shutdown, a full disk, a timeout).
    static func deterministicRefusal(_ error: PSQLError) -> String? {
        guard let state = error.serverInfo?[.sqlState], ["22", "23", "42", "P0"].contains(String(state.prefix(2))) else { return nil }
        let message = error.serverInfo?[.message] ?? "\(error)"
        let table = error.serverInfo?[.tableName].map { " (table \($0))" } ?? ""
        return "PostgreSQL refused it with \(state): \(message)\(table)"
    }

    private func applyInTransaction(stream: String, events: [DeliveredEvent]) async throws {
        guard let first = events.first, let last = events.last else { return }
        let logger = telemetry.logger
        try await database.transaction { connection in
            let current = try await Self.lockCheckpoint(stream, on: connection, logger: logger, idleTimeoutMs: self.idleTimeoutMs)
            guard self.follows(current, before: first.seq - 1, stream: stream) else { throw CheckpointMoved(current: current) }
            var index = 0
            var handled = false
            while index < events.count {
                let event = events[index]
                var log = logger
                log[metadataKey: "event"] = "\(event.envelope.id)"
                log[metadataKey: "type"] = "\(event.envelope.type)"
                if let (key, batch) = self.handlers.batchHandlers[event.envelope.type] {
                    // The run of consecutive events sharing this batch handler.
                    var end = index + 1
                    while end < events.count, self.handlers.batchHandlers[events[end].envelope.type]?.key == key { end += 1 }
                    let run = events[index..<end]
                    let spans = run.map { self.telemetry.startProcessSpan($0.envelope, destination: self.consumerName, kind: .consumer) }
                    defer { for s in spans { s.end() } }
                    handled = true
                    do {
                        try await batch(zip(run, spans).map { EventContext(event: $0, logger: log, traceContext: $1.context) }, connection)
                    } catch {
                        for s in spans { s.recordError(error); s.setStatus(.init(code: .error)) }
                        throw error
                    }
                    index = end
                    continue
                }
                index += 1
                guard let handler = self.handlers.handlers[event.envelope.type] else { continue }
                handled = true
                let span = self.telemetry.startProcessSpan(event.envelope, destination: self.consumerName, kind: .consumer)
                defer { span.end() }
                do {
                    try await ServiceContext.$current.withValue(span.context) {
                        try await handler(EventContext(event: event, logger: log, traceContext: span.context), connection)
                    }
                } catch {
                    span.recordError(error)
                    span.setStatus(.init(code: .error))
                    throw error
                }
            }
            if handled { self.crashBeforeCheckpoint?.pass("applied \(stream) events \(first.seq)...\(last.seq), before their checkpoint") }
            try await connection.prepared("UPDATE consumer_checkpoints SET seq = \(last.seq), updated_at = now() WHERE stream = \(stream)", logger: logger)
        }
    }

    /// Locks the stream's checkpoint row (created the first time) and returns it; the
    /// transaction may then sit idle at most `idleTimeoutMs` (set in the same statement, so it
    /// costs no round trip).
    static func lockCheckpoint(_ stream: String, on connection: PostgresConnection, logger: Logger, idleTimeoutMs: Int = 10_000) async throws -> Int64 {
        try await RowLock.value("""
            SELECT seq FROM consumer_checkpoints
            WHERE stream = \(stream) AND set_config('idle_in_transaction_session_timeout', \(String(idleTimeoutMs)), true) IS NOT NULL
            FOR UPDATE
            """,
                                creating: "INSERT INTO consumer_checkpoints (stream, seq) VALUES (\(stream), 0) ON CONFLICT DO NOTHING",
                                on: connection, logger: logger)
    }

    public func deadLetter(stream: String, seq: Int64, type: String?, raw: String, reason: String) async throws {
        let logger = telemetry.logger
        try await database.transaction { connection in
            let current = try await Self.lockCheckpoint(stream, on: connection, logger: logger, idleTimeoutMs: self.idleTimeoutMs)
            guard self.follows(current, before: seq - 1, stream: stream) else { throw CheckpointMoved(current: current) }
            try await connection.query("""
                INSERT INTO consumer_dead_letters (stream, seq, type, envelope, reason) VALUES (\(stream), \(seq), \(type), \(raw), \(reason))
                ON CONFLICT DO NOTHING
                """, logger: logger)
            try await connection.query("UPDATE consumer_checkpoints SET seq = \(seq), updated_at = now() WHERE stream = \(stream)", logger: logger)
        }
        written(stream, through: seq)
    }

    public func skip(stream: String, to seq: Int64, reason: String) async throws {
        try await database.query("""
            INSERT INTO consumer_checkpoints (stream, seq) VALUES (\(stream), \(seq))
            ON CONFLICT (stream) DO UPDATE SET seq = GREATEST(consumer_checkpoints.seq, excluded.seq), updated_at = now()
            """).drain()
        written(stream, through: seq)
    }
}
