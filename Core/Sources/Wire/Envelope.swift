import Foundation

/// The envelope every ZeroMQ message carries (one frame; JSON schema in
/// `proto/envelope.v1.schema.json`, the binary layout of requests and replies in
/// `proto/envelope-binary.md`, see ``EnvelopeFrame``):
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

    /// Reads an envelope from one frame, JSON or binary (``EnvelopeFrame``). Throws
    /// ``EnvelopeError`` naming what is wrong.
    public static func decode(_ data: Data) throws -> Envelope {
        let data = data.startIndex == 0 ? data : Data(data)
        if data.first == EnvelopeFrame.binaryMarker { return try decodeBinary(data) }
        var id: String?, type: String?, occurred: Int64?, source: String?, actor: String?, correlationId: String?
        var version = 1
        var headers: [String: String] = [:]
        var payloadRange: Range<Int>?
        func string(_ key: String, _ r: Range<Int>) throws -> String {
            do { return try JSONScanner.string(data, r) } catch {
                throw EnvelopeError(reason: "envelope member \"\(key)\" must be a string")
            }
        }
        func optionalString(_ key: String, _ r: Range<Int>) throws -> String? {
            JSONScanner.isNull(data, r) ? nil : try string(key, r)
        }
        do {
            try JSONScanner.forEachMember(of: data) { key, r in
                switch key {
                case "id": id = try string(key, r)
                case "type": type = try string(key, r)
                case "version":
                    do { version = try JSONScanner.integer(data, r) } catch {
                        throw EnvelopeError(reason: "envelope member \"version\" must be an integer")
                    }
                case "occurredAt":
                    guard let ms = ISOTime.parseEpochMilliseconds(try string(key, r)) else {
                        throw EnvelopeError(reason: "envelope member \"occurredAt\" must be an RFC 3339 timestamp")
                    }
                    occurred = ms
                case "source": source = try string(key, r)
                case "actor": actor = try optionalString(key, r)
                case "correlationId": correlationId = try optionalString(key, r)
                case "headers":
                    guard !JSONScanner.isNull(data, r) else { break }
                    do {
                        try JSONScanner.forEachMember(of: data, in: r) { k, vr in
                            if !JSONScanner.isNull(data, vr) { headers[k] = try JSONScanner.string(data, vr) }
                        }
                    } catch {
                        throw EnvelopeError(reason: "envelope member \"headers\" must be an object of strings")
                    }
                case "payload": payloadRange = r
                default: break
                }
            }
        } catch let e as EnvelopeError {
            throw e
        } catch {
            throw EnvelopeError(reason: "\(error)")
        }
        func missing(_ key: String) -> EnvelopeError { EnvelopeError(reason: "envelope member \"\(key)\" is missing") }
        guard let id else { throw missing("id") }
        guard let type else { throw missing("type") }
        guard !type.isEmpty else { throw EnvelopeError(reason: "envelope member \"type\" is empty") }
        guard let occurred else { throw missing("occurredAt") }
        guard let source else { throw missing("source") }
        guard let payloadRange else { throw missing("payload") }
        return Envelope(
            id: id, type: type, version: version,
            occurredAt: Date(timeIntervalSince1970: Double(occurred) / 1000),
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
    /// The byte count of a request's attachment: raw bytes sent as the frame after the
    /// envelope's (a photo), so they are neither base64-encoded nor scanned as JSON.
    public static let attachment = "attachment"
}
