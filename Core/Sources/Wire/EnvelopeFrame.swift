import Foundation

/// How an ``Envelope`` is laid out in its frame: the JSON object of
/// `proto/envelope.v1.schema.json`, or the binary layout of `proto/envelope-binary.md`
/// (the same members with length-prefixed strings and the payload's JSON bytes after them,
/// so neither side scans or escapes anything but the payload).
///
/// ``Envelope/decode(_:)`` reads both, telling them apart by the first byte (`0xB1` never
/// starts a JSON text). Requests use the binary layout unless `CHRONIR_RPC_FRAME=json`;
/// a server answers in the layout of the request. Events (the outbox, PUB streams, replays)
/// stay JSON.
public enum EnvelopeFrame: String, Sendable, CaseIterable {
    case json
    case binary

    /// The first byte of a binary frame.
    public static let binaryMarker: UInt8 = 0xB1

    /// The layout of `frame` (JSON unless it starts with ``binaryMarker``).
    public static func of(_ frame: Data) -> EnvelopeFrame {
        frame.first == binaryMarker ? .binary : .json
    }
}

extension Envelope {
    /// The envelope as one frame in `layout`.
    public func encoded(as layout: EnvelopeFrame) -> Data {
        switch layout {
        case .json: return encoded()
        case .binary: return encodedBinary() ?? encoded()
        }
    }

    private static let actorFlag: UInt8 = 1
    private static let correlationFlag: UInt8 = 2

    /// The binary layout; nil when a string is longer than its 16-bit length allows, or the
    /// version does not fit its 32 bits (the caller then sends JSON, which every receiver reads).
    func encodedBinary() -> Data? {
        guard (0...Int(UInt32.max)).contains(version) else { return nil }
        var size = 16 + id.utf8.count + type.utf8.count + source.utf8.count + payload.count
        size += (actor?.utf8.count ?? 0) + (correlationId?.utf8.count ?? 0) + 2
        for (k, v) in headers { size += 4 + k.utf8.count + v.utf8.count }
        var w = BinaryFrameWriter(capacity: size + 16)
        w.byte(EnvelopeFrame.binaryMarker)
        w.byte((actor == nil ? 0 : Self.actorFlag) | (correlationId == nil ? 0 : Self.correlationFlag))
        w.uint32(UInt32(version))
        w.int64(Int64((occurredAt.timeIntervalSince1970 * 1000).rounded(.toNearestOrEven)))
        guard headers.count <= Int(UInt16.max), w.string(id), w.string(type), w.string(source) else { return nil }
        if let actor, !w.string(actor) { return nil }
        if let correlationId, !w.string(correlationId) { return nil }
        w.uint16(UInt16(headers.count))
        for (k, v) in headers {
            guard w.string(k), w.string(v) else { return nil }
        }
        if payload.isEmpty { w.bytes.append(contentsOf: "null".utf8) } else { w.bytes.append(contentsOf: payload) }
        return Data(w.bytes)
    }

    /// Reads the binary layout. Throws ``EnvelopeError`` naming what is wrong.
    static func decodeBinary(_ data: Data) throws -> Envelope {
        try data.withUnsafeBytes { raw -> Envelope in
            var r = BinaryFrameReader(bytes: raw, at: 1)
            let flags = try r.byte("flags")
            guard flags & ~(actorFlag | correlationFlag) == 0 else {
                throw EnvelopeError(reason: "binary envelope has unknown flags \(flags)")
            }
            let version = Int(try r.uint32("version"))
            let occurred = try r.int64("occurredAt")
            let id = try r.string("id")
            let type = try r.string("type")
            guard !type.isEmpty else { throw EnvelopeError(reason: "envelope member \"type\" is empty") }
            let source = try r.string("source")
            let actor = flags & actorFlag != 0 ? try r.string("actor") : nil
            let correlationId = flags & correlationFlag != 0 ? try r.string("correlationId") : nil
            let count = Int(try r.uint16("headers"))
            var headers: [String: String] = [:]
            headers.reserveCapacity(count)
            for _ in 0..<count {
                let k = try r.string("headers")
                headers[k] = try r.string("headers")
            }
            guard r.offset < raw.count else { throw EnvelopeError(reason: "envelope member \"payload\" is missing") }
            return Envelope(
                id: id, type: type, version: version,
                occurredAt: Date(timeIntervalSince1970: Double(occurred) / 1000),
                source: source, actor: actor, headers: headers, correlationId: correlationId,
                payload: Data(raw[r.offset...])
            )
        }
    }
}

/// Appends the fields of a binary envelope (little-endian integers, strings as a 16-bit
/// length and their UTF-8 bytes).
private struct BinaryFrameWriter {
    var bytes: [UInt8]

    init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func byte(_ b: UInt8) { bytes.append(b) }

    mutating func uint16(_ v: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
    }

    mutating func uint32(_ v: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) }
    }

    mutating func int64(_ v: Int64) {
        let u = UInt64(bitPattern: v)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: u >> UInt64(shift))) }
    }

    /// False when the string is too long for its length field.
    mutating func string(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { utf8 in
            guard utf8.count <= Int(UInt16.max) else { return false }
            uint16(UInt16(utf8.count))
            bytes.append(contentsOf: utf8)
            return true
        }
    }
}

/// Reads the fields of a binary envelope, each read checked against the frame's end.
private struct BinaryFrameReader {
    let bytes: UnsafeRawBufferPointer
    var offset: Int

    init(bytes: UnsafeRawBufferPointer, at offset: Int) {
        self.bytes = bytes
        self.offset = offset
    }

    private func truncated(_ member: String) -> EnvelopeError {
        EnvelopeError(reason: "binary envelope ends inside member \"\(member)\"")
    }

    mutating func byte(_ member: String) throws -> UInt8 {
        guard offset < bytes.count else { throw truncated(member) }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16(_ member: String) throws -> UInt16 {
        guard offset + 2 <= bytes.count else { throw truncated(member) }
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    mutating func uint32(_ member: String) throws -> UInt32 {
        guard offset + 4 <= bytes.count else { throw truncated(member) }
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[offset + i]) << UInt32(8 * i) }
        offset += 4
        return v
    }

    mutating func int64(_ member: String) throws -> Int64 {
        guard offset + 8 <= bytes.count else { throw truncated(member) }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[offset + i]) << UInt64(8 * i) }
        offset += 8
        return Int64(bitPattern: v)
    }

    mutating func string(_ member: String) throws -> String {
        let count = Int(try uint16(member))
        guard offset + count <= bytes.count else { throw truncated(member) }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
        offset += count
        // Ids, types, sources and headers are ASCII: such bytes are valid UTF-8 as they are, and
        // the generic validation (a metadata lookup per string) is only needed for the others.
        if !slice.contains(where: { $0 >= 0x80 }) { return String(decoding: slice, as: UTF8.self) }
        guard let s = String(validating: slice.assumingMemoryBound(to: UInt8.self), as: UTF8.self) else {
            throw EnvelopeError(reason: "envelope member \"\(member)\" is not valid UTF-8")
        }
        return s
    }
}
