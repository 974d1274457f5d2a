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

    public init(stream: String, source: String, telemetry: Telemetry, relay: OutboxRelay?) {
        self.stream = stream
        self.source = source
        self.telemetry = telemetry
        self.relay = relay
    }

    /// Builds an envelope for `payload` with a publish span linked to the current trace.
    /// `id`: the event id, when the caller recorded it beforehand (new by default).
    public func envelope<P: Encodable>(_ type: String, _ payload: P, actor: String?, version: Int = 1, id: String = UUIDv7.string(),
                                       context: ServiceContext = .current ?? .topLevel) throws -> Envelope {
        var headers: [String: String] = [:]
        let span = telemetry.startPublishSpan(type: type, destination: stream, id: id, context: context, kind: .producer, headers: &headers)
        span.end()
        return Envelope(id: id, type: type, version: version, source: source, actor: actor, headers: headers,
                        payload: try JSONCoding.encode(payload))
    }

    /// Appends one event on `connection` (which must be inside a transaction).
    @discardableResult
    public func append<P: Encodable>(_ type: String, _ payload: P, actor: String?, version: Int = 1,
                                     on connection: PostgresConnection) async throws -> Envelope {
        let e = try envelope(type, payload, actor: actor, version: version)
        try await append([e], on: connection)
        return e
    }

    /// Appends prepared envelopes in one statement.
    public func append(_ envelopes: [Envelope], on connection: PostgresConnection) async throws {
        guard !envelopes.isEmpty else { return }
        try await connection.prepared("\(outboxInsert: rows(envelopes))", logger: telemetry.logger)
    }

    /// Prepared envelopes as the rows of this writer's outbox, for a statement that inserts
    /// them alongside other changes (`\(outboxInsert: rows)` inside a `WITH … AS (…)`).
    public func rows(_ envelopes: [Envelope]) -> OutboxRows {
        OutboxRows(stream: stream, ids: envelopes.map(\.id), types: envelopes.map(\.type),
                   bodies: envelopes.map { String(decoding: $0.encoded(), as: UTF8.self) })
    }

    /// Tells the relay that new events were committed, so they go out without waiting for its
    /// next poll. Call after the transaction commits.
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
