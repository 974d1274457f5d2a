import Foundation

/// The JSON envelope every ZeroMQ message carries (one frame; schema in
/// `proto/envelope.v1.schema.json`):
///
/// `{id, type, version, occurredAt, source, actor, headers {traceparent, tracestate, …},
/// correlationId?, payload}`.
///
/// The payload stays raw JSON bytes until the code that knows its type decodes it, so the
/// envelope is parsed once, cheaply, whatever the payload. Unknown members are ignored.
public struct Envelope: Sendable {
    /// A UUIDv7, unique per message.
    public var id: String
    /// The message type, `<service>.<name>`, e.g. `alarms.alarm-upserted`.
    public var type: String
    /// The payload schema version of this type.
    public var version: Int
    /// When the message was created.
    public var occurredAt: Date
    /// `<service>/<instance>` that created the message.
    public var source: String
    /// The user on whose behalf the message was sent, if any.
    public var actor: String?
    /// Transport headers: `traceparent`, `tracestate`, `deadline`, `idempotencyKey`.
    public var headers: [String: String]
    /// On a reply: the id of the request it answers.
    public var correlationId: String?
    /// The payload as raw JSON.
    public var payload: Data

    public init(
        id: String = UUIDv7.string(),
        type: String,
        version: Int = 1,
        occurredAt: Date = Date(),
        source: String,
        actor: String? = nil,
        headers: [String: String] = [:],
        correlationId: String? = nil,
        payload: Data
    ) {
        self.id = id
        self.type = type
        self.version = version
        self.occurredAt = occurredAt
        self.source = source
        self.actor = actor
        self.headers = headers
        self.correlationId = correlationId
        self.payload = payload
    }

    /// Builds an envelope around an encodable payload.
    public static func make<P: Encodable>(
        type: String, version: Int = 1, payload: P, source: String, actor: String? = nil,
        headers: [String: String] = [:], correlationId: String? = nil, occurredAt: Date = Date()
    ) throws -> Envelope {
        Envelope(type: type, version: version, occurredAt: occurredAt, source: source, actor: actor,
                 headers: headers, correlationId: correlationId, payload: try JSONCoding.encode(payload))
    }

    /// Decodes the payload as `P`; a mismatch throws a `CA016` ``ServiceError`` naming the field.
    public func decodePayload<P: Decodable>(_ type: P.Type) throws -> P {
        try JSONCoding.decode(P.self, from: payload)
    }
}

/// Why bytes could not be read as an envelope.
public struct EnvelopeError: Error, CustomStringConvertible, Sendable {
    public let reason: String
    public var description: String { reason }
}

extension Envelope {
    /// The envelope as one JSON frame.
    public func encoded() -> Data {
        var w = JSONWriter(capacity: 200 + payload.count)
        w.raw("{\"id\":")
        w.string(id)
        w.raw(",\"type\":")
        w.string(type)
        w.raw(",\"version\":")
        w.integer(version)
        w.raw(",\"occurredAt\":")
        w.string(ISOTime.format(occurredAt))
        w.raw(",\"source\":")
        w.string(source)
        w.raw(",\"actor\":")
        if let actor { w.string(actor) } else { w.raw("null") }
        w.raw(",\"headers\":{")
        var first = true
        for (k, v) in headers.sorted(by: { $0.key < $1.key }) {
            if !first { w.raw(",") }
            first = false
            w.string(k)
            w.raw(":")
            w.string(v)
        }
        w.raw("}")
        if let correlationId {
            w.raw(",\"correlationId\":")
            w.string(correlationId)
        }
        w.raw(",\"payload\":")
        if payload.isEmpty { w.raw("null") } else { w.raw(payload) }
        w.raw("}")
        return Data(w.bytes)
    }

    /// Reads an envelope from one frame. Throws ``EnvelopeError`` naming what is wrong.
    public static func decode(_ data: Data) throws -> Envelope {
        let data = data.startIndex == 0 ? data : Data(data)
        let m: [String: Range<Int>]
        do {
            m = try JSONScanner.members(of: data)
        } catch {
            throw EnvelopeError(reason: "\(error)")
        }
        func required(_ key: String) throws -> Range<Int> {
            guard let r = m[key] else { throw EnvelopeError(reason: "envelope member \"\(key)\" is missing") }
            return r
        }
        func string(_ key: String) throws -> String {
            do { return try JSONScanner.string(data, try required(key)) } catch let e as EnvelopeError { throw e } catch {
                throw EnvelopeError(reason: "envelope member \"\(key)\" must be a string")
            }
        }
        func optionalString(_ key: String) throws -> String? {
            guard let r = m[key], !JSONScanner.isNull(data, r) else { return nil }
            return try string(key)
        }
        let id = try string("id")
        let type = try string("type")
        guard !type.isEmpty else { throw EnvelopeError(reason: "envelope member \"type\" is empty") }
        let version: Int
        if let r = m["version"] {
            do { version = try JSONScanner.integer(data, r) } catch {
                throw EnvelopeError(reason: "envelope member \"version\" must be an integer")
            }
        } else {
            version = 1
        }
        let occurredText = try string("occurredAt")
        guard let occurredMs = ISOTime.parseEpochMilliseconds(occurredText) else {
            throw EnvelopeError(reason: "envelope member \"occurredAt\" must be an RFC 3339 timestamp")
        }
        let source = try string("source")
        let actor = try optionalString("actor")
        let correlationId = try optionalString("correlationId")
        var headers: [String: String] = [:]
        if let r = m["headers"], !JSONScanner.isNull(data, r) {
            do {
                for (k, vr) in try JSONScanner.members(of: data, in: r) where !JSONScanner.isNull(data, vr) {
                    headers[k] = try JSONScanner.string(data, vr)
                }
            } catch {
                throw EnvelopeError(reason: "envelope member \"headers\" must be an object of strings")
            }
        }
        let payloadRange = try required("payload")
        return Envelope(
            id: id, type: type, version: version,
            occurredAt: Date(timeIntervalSince1970: Double(occurredMs) / 1000),
            source: source, actor: actor, headers: headers, correlationId: correlationId,
            payload: data.subdata(in: payloadRange)
        )
    }
}

/// Header names used in ``Envelope/headers``.
public enum EnvelopeHeader {
    /// W3C trace context.
    public static let traceparent = "traceparent"
    /// W3C trace state.
    public static let tracestate = "tracestate"
    /// Absolute deadline of a request, milliseconds since the Unix epoch.
    public static let deadline = "deadline"
    /// Key that makes a request safe to retry.
    public static let idempotencyKey = "idempotencyKey"
}
