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
    public func envelope<P: Encodable>(_ type: String, _ payload: P, actor: String?, version: Int = 1,
                                       context: ServiceContext = .current ?? .topLevel) throws -> Envelope {
        let id = UUIDv7.string()
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
        let ids = envelopes.map(\.id)
        let types = envelopes.map(\.type)
        let bodies = envelopes.map { String(decoding: $0.encoded(), as: UTF8.self) }
        try await connection.query("""
            INSERT INTO outbox (event_id, stream, type, envelope)
            SELECT e.id, \(stream), e.type, e.body FROM unnest(\(ids)::text[], \(types)::text[], \(bodies)::text[]) AS e(id, type, body)
            """, logger: telemetry.logger)
    }

    /// Tells the relay that new events were committed, so they go out without waiting for its
    /// next poll. Call after the transaction commits.
    public func committed() {
        relay?.wake()
    }
}
