import Foundation
import Messaging
import Persistence
import PostgresNIO
import Tracing

/// Writes events into the service's outbox inside the caller's transaction, so an event
/// exists if and only if the state change that caused it was committed.
///
/// Each event gets a `<type> publish` producer span whose context is stored in the envelope
/// (`traceparent`), so the consumer's span, and anything it causes later, joins the trace of
/// the request that made the change.
public struct OutboxWriter: Sendable {
    /// The stream events go to (the service's name).
    public let stream: String
    /// `<service>/<instance>`.
    public let source: String
    /// Where its publish spans go.
    public let telemetry: Telemetry
    let relay: OutboxRelay?
    /// The database the outbox lives in (its ``transaction(isolation:_:)``).
    public let database: Database
    /// Whether events written inside ``Database/transaction(isolation:_:)`` at READ COMMITTED
    /// are numbered by the transaction's last statement (``EventsAtCommit``) rather than later
    /// by the relay (`CHRONIR_OUTBOX_NUMBER_AT_COMMIT`).
    public let numbersAtCommit: Bool

    /// `relay`: nil where nothing publishes (tests that read the outbox table).
    /// `numbersAtCommit`: see ``numbersAtCommit``.
    public init(stream: String, source: String, telemetry: Telemetry, database: Database, relay: OutboxRelay?,
                numbersAtCommit: Bool = true) {
        self.database = database
        self.numbersAtCommit = numbersAtCommit
        self.stream = stream
        self.source = source
        self.telemetry = telemetry
        self.relay = relay
    }

    /// Builds an envelope of `event` for `payload` with a publish span linked to the current
    /// trace. `id`: the event id, when the caller recorded it beforehand (new by default).
    /// `version`: the payload schema version (the event type's own by default).
    public func envelope<P>(_ event: TypedEvent<P>, _ payload: P, actor: String?, version: Int? = nil, id: String = UUIDv7.string(),
                            context: ServiceContext = .current ?? .topLevel) throws -> Envelope {
        let type = event.type
        var headers: [String: String] = [:]
        let span = telemetry.startPublishSpan(type: type, destination: stream, id: id, context: context, kind: .producer, headers: &headers)
        span.end()
        let e = Envelope(id: id, type: type, version: version ?? event.version, source: source, actor: actor, headers: headers,
                         payload: try JSONCoding.encode(payload))
        try refuseOversized(e)
        return e
    }

    /// The largest event, as it is written into a replay (`events.replay` escapes each envelope
    /// into a JSON string, so quotes and backslashes count twice): half the 1 MiB frame less the
    /// reply's own room. A larger one could be stored but never replayed, and would stop every
    /// consumer of the stream at it; it is refused here, failing the change that made it.
    public static let maxEventBytes = 480 << 10

    /// Throws `CA`-payload-too-large (and counts `chronir_outbox_events_refused_total`) when `e`
    /// would pass ``maxEventBytes`` in a replay.
    func refuseOversized(_ e: Envelope) throws {
        // Every event of today is far below; only a large payload is measured exactly.
        guard e.payload.count > Self.maxEventBytes / 4 else { return }
        let body = e.encoded()
        var size = body.count
        for byte in body where byte == 0x22 || byte == 0x5C || byte < 0x20 { size += byte < 0x20 ? 5 : 1 }
        guard size > Self.maxEventBytes else { return }
        telemetry.counter("chronir_outbox_events_refused_total", [("stream", stream)]).increment()
        telemetry.logger.error("event refused: too large to be replayed", metadata: [
            "stream": "\(stream)", "type": "\(e.type)", "bytes": "\(size)", "limit": "\(Self.maxEventBytes)"])
        throw ServiceError(.payloadTooLarge, "event \(e.type) would take \(size) bytes in a replay, more than the \(Self.maxEventBytes)-byte limit")
    }

    /// Appends one event on `connection` (which must be inside a transaction).
    @discardableResult
    public func append<P>(_ event: TypedEvent<P>, _ payload: P, actor: String?, version: Int? = nil,
                          on connection: PostgresConnection) async throws -> Envelope {
        let e = try envelope(event, payload, actor: actor, version: version)
        try await append([e], on: connection)
        return e
    }

    /// Appends prepared envelopes in one statement (or, numbered at commit, with the
    /// transaction's last statement).
    public func append(_ envelopes: [Envelope], on connection: PostgresConnection) async throws {
        guard !envelopes.isEmpty else { return }
        for e in envelopes { try refuseOversized(e) }
        let rows = rows(envelopes)
        guard !rows.ids.isEmpty else { return }
        try await connection.prepared("\(outboxInsert: rows)", logger: telemetry.logger)
    }

    /// Prepared envelopes as the rows of this writer's outbox, for a statement that inserts
    /// them alongside other changes (`\(outboxInsert: rows)` inside a `WITH … AS (…)`).
    /// Inside ``Database/transaction(isolation:_:)`` the relay remembers them, and sends them
    /// without reading them back. Numbered at commit (``numbersAtCommit``), the transaction's
    /// last statement inserts them and the rows returned are empty: the statement they are
    /// interpolated in inserts nothing.
    public func rows(_ envelopes: [Envelope]) -> OutboxRows {
        let ids = envelopes.map(\.id)
        let bodies = envelopes.map { String(decoding: $0.encoded(), as: UTF8.self) }
        let types = envelopes.map(\.type)
        if numbersAtCommit, let hooks = CommitHooks.current, hooks.readCommitted, !ids.isEmpty {
            let stream = self.stream, relay = self.relay
            hooks.finalStatement(key: "outbox \(stream)") { EventsAtCommit(stream: stream, relay: relay) }
                .add(ids: ids, types: types, bodies: bodies)
            // Remembered before the commit: the relay sends only rows it sees committed, and
            // the ids of a transaction rolled back never appear (they age out of the memory).
            relay?.bodies.remember(ids: ids, bodies: bodies.map { Data($0.utf8) })
            return OutboxRows(stream: stream, ids: [], types: [], bodies: [])
        }
        if let relay, let hooks = CommitHooks.current, !ids.isEmpty {
            // The bytes of the very strings bound, so memory and table agree byte for byte.
            hooks.afterCommit { relay.bodies.remember(ids: ids, bodies: bodies.map { Data($0.utf8) }) }
        }
        return OutboxRows(stream: stream, ids: ids, types: types, bodies: bodies)
    }

    /// Runs `body` in a transaction of the outbox's database and, once it commits, wakes the
    /// relay so the events `body` appended go out at once rather than at its next poll. The
    /// one way a service changes state and writes events: nothing to remember after the commit.
    /// `wakes`: whether the committed value means events were written (default: always; a
    /// wake after nothing was written costs the relay one empty poll).
    public func transaction<T: Sendable>(isolation: Database.Isolation = .readCommitted,
                                         wakes: (T) -> Bool = { _ in true },
                                         _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let value = try await database.transaction(isolation: isolation, body)
        if wakes(value) { relay?.wake() }
        return value
    }

    /// Tells the relay that new events were committed, so they go out without waiting for its
    /// next poll: for events committed by a transaction that is not ``transaction(isolation:_:)``
    /// (a consumer's, whose applier calls this after each batch).
    public func committed() {
        relay?.wake()
    }
}

/// Outbox rows ready to insert (see ``OutboxWriter/rows(_:)``).
public struct OutboxRows: Sendable {
    let stream: String
    let ids: [String]
    let types: [String]
    let bodies: [String]
}

extension PostgresQuery.StringInterpolation {
    /// `INSERT INTO outbox …` of `rows`, with bound parameters.
    public mutating func appendInterpolation(outboxInsert rows: OutboxRows) {
        appendLiteral("INSERT INTO outbox (event_id, stream, type, envelope) SELECT e.id, ")
        appendInterpolation(rows.stream)
        appendLiteral(", e.type, e.body FROM unnest(")
        appendInterpolation(rows.ids)
        appendLiteral("::text[], ")
        appendInterpolation(rows.types)
        appendLiteral("::text[], ")
        appendInterpolation(rows.bodies)
        appendLiteral("::text[]) AS e(id, type, body)")
    }
}
