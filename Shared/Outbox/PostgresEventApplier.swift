import Foundation
import Logging
import Messaging
import Persistence
import PostgresNIO
import Tracing

/// What an event handler gets besides the payload.
public struct EventContext: Sendable {
    /// The event.
    public let event: DeliveredEvent
    /// A logger with the event's type and id.
    public let logger: Logger
    /// The context of the event's process span (batch handlers pass it to what they publish).
    public var traceContext: ServiceContext = .topLevel

    /// The envelope.
    public var envelope: Envelope { event.envelope }
}

/// The event types a consumer handles, each applied inside the consumer's transaction.
public struct EventHandlers: Sendable {
    public typealias Handler = @Sendable (EventContext, PostgresConnection) async throws -> Void
    /// Handles a run of consecutive events (in order) whose types share the handler.
    public typealias BatchHandler = @Sendable ([EventContext], PostgresConnection) async throws -> Void
    private(set) var handlers: [String: Handler] = [:]
    private(set) var batchHandlers: [String: (key: String, handler: BatchHandler)] = [:]

    public init() {}

    /// Handles `type`, decoding the payload as `P` (a mismatch dead-letters the event).
    public mutating func on<P: Decodable & Sendable>(
        _ type: String, _ payload: P.Type,
        _ handler: @escaping @Sendable (P, EventContext, PostgresConnection) async throws -> Void
    ) {
        handlers[type] = { context, connection in
            let p = try context.envelope.decodePayload(P.self)
            try await handler(p, context, connection)
        }
    }

    /// Handles `types` in batches: consecutive events of these types in one delivery are given
    /// together, in order, so a handler can write them with a few statements instead of a few
    /// per event. A payload that does not decode makes the whole batch fail; the consumer then
    /// applies its events one by one and dead-letters the bad one.
    public mutating func onBatch(_ types: [String], _ handler: @escaping BatchHandler) {
        let key = types.sorted().joined(separator: ",")
        for type in types { batchHandlers[type] = (key, handler) }
    }

    /// The handled types.
    public var types: [String] { Set(handlers.keys).union(batchHandlers.keys).sorted() }
}

/// Applies events in one transaction with the consumer's checkpoint: the checkpoint row is
/// locked first, so replicas consuming the same stream take turns and each event is applied
/// exactly once; event types without a handler just advance the checkpoint.
public final class PostgresEventApplier: EventApplier {
    private let database: Database
    private let handlers: EventHandlers
    private let telemetry: Telemetry
    private let consumerName: String
    private let afterCommit: @Sendable () -> Void

    /// `afterCommit` runs after each applied batch commits: wake this service's outbox relay
    /// there, so events the handlers wrote go out at once rather than at the relay's next poll.
    public init(database: Database, handlers: EventHandlers, telemetry: Telemetry, consumerName: String,
                afterCommit: @escaping @Sendable () -> Void = {}) {
        self.database = database
        self.handlers = handlers
        self.telemetry = telemetry
        self.consumerName = consumerName
        self.afterCommit = afterCommit
    }

    public func checkpoint(stream: String) async throws -> Int64 {
        try await database.query("SELECT seq FROM consumer_checkpoints WHERE stream = \(stream)").first(Int64.self) ?? 0
    }

    public func apply(stream: String, events: [DeliveredEvent]) async throws {
        guard let first = events.first, let last = events.last else { return }
        let logger = telemetry.logger
        try await database.transaction { connection in
            let current = try await Self.lockCheckpoint(stream, on: connection, logger: logger)
            guard current == first.seq - 1 else { throw CheckpointMoved(current: current) }
            var index = 0
            while index < events.count {
                let event = events[index]
                var log = logger
                log[metadataKey: "event"] = "\(event.envelope.id)"
                log[metadataKey: "type"] = "\(event.envelope.type)"
                if let (key, batch) = handlers.batchHandlers[event.envelope.type] {
                    // The run of consecutive events sharing this batch handler.
                    var end = index + 1
                    while end < events.count, handlers.batchHandlers[events[end].envelope.type]?.key == key { end += 1 }
                    let run = events[index..<end]
                    let spans = run.map { telemetry.startProcessSpan($0.envelope, destination: consumerName, kind: .consumer) }
                    defer { for s in spans { s.end() } }
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
                guard let handler = handlers.handlers[event.envelope.type] else { continue }
                let span = telemetry.startProcessSpan(event.envelope, destination: consumerName, kind: .consumer)
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
            try await connection.prepared("UPDATE consumer_checkpoints SET seq = \(last.seq), updated_at = now() WHERE stream = \(stream)", logger: logger)
        }
        afterCommit()
    }

    /// Locks the stream's checkpoint row (created the first time) and returns it.
    static func lockCheckpoint(_ stream: String, on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        try await RowLock.value("SELECT seq FROM consumer_checkpoints WHERE stream = \(stream) FOR UPDATE",
                                creating: "INSERT INTO consumer_checkpoints (stream, seq) VALUES (\(stream), 0) ON CONFLICT DO NOTHING",
                                on: connection, logger: logger)
    }

    public func deadLetter(stream: String, seq: Int64, type: String?, raw: String, reason: String) async throws {
        let logger = telemetry.logger
        try await database.transaction { connection in
            let current = try await Self.lockCheckpoint(stream, on: connection, logger: logger)
            guard current == seq - 1 else { throw CheckpointMoved(current: current) }
            try await connection.query("""
                INSERT INTO consumer_dead_letters (stream, seq, type, envelope, reason) VALUES (\(stream), \(seq), \(type), \(raw), \(reason))
                ON CONFLICT DO NOTHING
                """, logger: logger)
            try await connection.query("UPDATE consumer_checkpoints SET seq = \(seq), updated_at = now() WHERE stream = \(stream)", logger: logger)
        }
    }

    public func skip(stream: String, to seq: Int64, reason: String) async throws {
        try await database.query("""
            INSERT INTO consumer_checkpoints (stream, seq) VALUES (\(stream), \(seq))
            ON CONFLICT (stream) DO UPDATE SET seq = GREATEST(consumer_checkpoints.seq, excluded.seq), updated_at = now()
            """)
    }
}
