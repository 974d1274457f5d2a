import Foundation

/// A streaming `Encoder` that writes JSON bytes directly (no intermediate tree), several
/// times faster than Foundation's `JSONEncoder` on the small payloads messages carry.
///
/// Dates are written as RFC 3339 strings (``ISOTime``), `Data` as base64, `URL` as its
/// string; `nil` optionals are left out by synthesized `Codable` (explicit `encodeNil` writes
/// `null`); non-finite numbers throw. Containers nested by hand (`nestedContainer`,
/// `superEncoder`) are not streamed: ``encode(_:)`` then throws ``Unsupported`` and
/// ``JSONCoding`` falls back to Foundation's encoder.
public struct FastJSONEncoder: Sendable {
    /// The value used a container shape this encoder does not stream.
    public struct Unsupported: Error {}

    public init() {}

    /// Encodes `value` to JSON bytes.
    public func encode<T: Encodable>(_ value: T) throws -> Data {
        let state = EncoderState()
        try state.encodeValue(value)
        if state.unsupported { throw Unsupported() }
        return Data(state.out.bytes)
    }
}

/// The state of one encoding: the output and one level per value being written.
final class EncoderState {
    var out = JSONWriter(capacity: 256)
    var unsupported = false

    enum Kind { case empty, object, array, single }

    struct Level {
        var kind = Kind.empty
        var count = 0
    }

    var levels: [Level] = []

    /// The keys leading to the value being written: pushed and popped around each keyed
    /// member, so a container knows its coding path as a length into this one array (a
    /// `codingPath + [key]` per nested value was an allocation each, and is only read for an
    /// error or by code that asks).
    var keys: [any CodingKey] = []

    /// The coding path of a container `count` keys deep.
    func path(_ count: Int) -> [any CodingKey] { Array(keys.prefix(count)) }

    /// Writes one complete value, at the path `keys` holds now.
    func encodeValue<T: Encodable>(_ value: T) throws {
        if writeSpecial(value) { return }
        levels.append(Level())
        let depth = levels.count
        try value.encode(to: FastEncoder(state: self, depth: depth, pathCount: keys.count))
        let level = levels.removeLast()
        switch level.kind {
        case .empty: out.raw("{}")  // wrote nothing: an empty object, as JSONEncoder does
        case .object: out.raw("}")
        case .array: out.raw("]")
        case .single: break
        }
    }

    /// Dates, data, URLs and decimals have a fixed JSON form. (Type identity is checked
    /// first: a metadata comparison, much cheaper than a dynamic cast per value.)
    /// Strings, integers and booleans reached through generic code (the elements of `[String]`)
    /// are written here too, as the containers' concrete overloads write them, instead of
    /// through `encode(to:)` and a single-value container.
    func writeSpecial<T: Encodable>(_ value: T) -> Bool {
        if T.self == String.self {
            out.string(unsafeBitCast(value, to: String.self))
        } else if T.self == Int.self {
            out.integer(unsafeBitCast(value, to: Int.self))
        } else if T.self == Bool.self {
            out.raw(unsafeBitCast(value, to: Bool.self) ? "true" : "false")
        } else if T.self == Int64.self {
            out.integer(Int(unsafeBitCast(value, to: Int64.self)))
        } else if T.self == Date.self {
            out.string(ISOTime.format(value as! Date))
        } else if T.self == URL.self {
            out.string((value as! URL).absoluteString)
        } else if T.self == Data.self {
            out.string((value as! Data).base64EncodedString())
        } else if T.self == Decimal.self {
            out.bytes.append(contentsOf: Array((value as! Decimal).description.utf8))
        } else {
            return false
        }
        return true
    }

    func writeDouble(_ v: Double, path: @autoclosure () -> [any CodingKey]) throws {
        guard v.isFinite else {
            throw EncodingError.invalidValue(v, .init(codingPath: path(), debugDescription: "\(v) is not representable in JSON"))
        }
        if v.rounded() == v, abs(v) < 1e15 {
            out.integer(Int(v))
        } else {
            out.bytes.append(contentsOf: Array(v.description.utf8))
        }
    }

    func writeUnsigned<U: UnsignedInteger>(_ v: U) {
        out.bytes.append(contentsOf: Array(String(v).utf8))
    }

    /// Opens (or continues) the container of level `depth`.
    func open(_ kind: Kind, depth: Int) {
        let current = levels[depth - 1].kind
        if current == kind { return }
        guard current == .empty else {
            unsupported = true
            return
        }
        levels[depth - 1].kind = kind
        out.raw(kind == .object ? "{" : "[")
    }

    /// Claims level `depth` for a single value.
    func single(depth: Int) {
        if levels[depth - 1].kind != .empty { unsupported = true }
        levels[depth - 1].kind = .single
    }

    /// Writes the separator before the next element of level `depth`.
    func nextElement(depth: Int) {
        if levels[depth - 1].count > 0 { out.raw(",") }
        levels[depth - 1].count += 1
    }
}

struct FastEncoder: Encoder {
    let state: EncoderState
    let depth: Int
    let pathCount: Int
    var codingPath: [any CodingKey] { state.path(pathCount) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        state.open(.object, depth: depth)
        return KeyedEncodingContainer(FastKeyedEncoding<Key>(state: state, depth: depth, pathCount: pathCount))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        state.open(.array, depth: depth)
        return FastUnkeyedEncoding(state: state, depth: depth, pathCount: pathCount)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        FastSingleValueEncoding(state: state, depth: depth, pathCount: pathCount)
    }
}

struct FastSingleValueEncoding: SingleValueEncodingContainer {
    let state: EncoderState
    let depth: Int
    let pathCount: Int
    var codingPath: [any CodingKey] { state.path(pathCount) }

    private func claim() { state.single(depth: depth) }

    mutating func encodeNil() throws { claim(); state.out.raw("null") }
    mutating func encode(_ value: Bool) throws { claim(); state.out.raw(value ? "true" : "false") }
    mutating func encode(_ value: String) throws { claim(); state.out.string(value) }
    mutating func encode(_ value: Double) throws { claim(); try state.writeDouble(value, path: codingPath) }
    mutating func encode(_ value: Float) throws { claim(); try state.writeDouble(Double(value), path: codingPath) }
    mutating func encode(_ value: Int) throws { claim(); state.out.integer(value) }
    mutating func encode(_ value: Int8) throws { claim(); state.out.integer(Int(value)) }
    mutating func encode(_ value: Int16) throws { claim(); state.out.integer(Int(value)) }
    mutating func encode(_ value: Int32) throws { claim(); state.out.integer(Int(value)) }
    mutating func encode(_ value: Int64) throws { claim(); state.out.integer(Int(value)) }
    mutating func encode(_ value: UInt) throws { claim(); state.writeUnsigned(value) }
    mutating func encode(_ value: UInt8) throws { claim(); state.writeUnsigned(value) }
    mutating func encode(_ value: UInt16) throws { claim(); state.writeUnsigned(value) }
    mutating func encode(_ value: UInt32) throws { claim(); state.writeUnsigned(value) }
    mutating func encode(_ value: UInt64) throws { claim(); state.writeUnsigned(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        claim()
        try state.encodeValue(value)
    }
}

struct FastKeyedEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let state: EncoderState
    let depth: Int
    let pathCount: Int
    var codingPath: [any CodingKey] { state.path(pathCount) }

    private func key(_ key: Key) {
        state.nextElement(depth: depth)
        state.out.string(key.stringValue)
        state.out.raw(":")
    }

    mutating func encodeNil(forKey k: Key) throws { key(k); state.out.raw("null") }
    mutating func encode(_ value: Bool, forKey k: Key) throws { key(k); state.out.raw(value ? "true" : "false") }
    mutating func encode(_ value: String, forKey k: Key) throws { key(k); state.out.string(value) }
    mutating func encode(_ value: Double, forKey k: Key) throws { key(k); try state.writeDouble(value, path: codingPath + [k]) }
    mutating func encode(_ value: Float, forKey k: Key) throws { key(k); try state.writeDouble(Double(value), path: codingPath + [k]) }
    mutating func encode(_ value: Int, forKey k: Key) throws { key(k); state.out.integer(value) }
    mutating func encode(_ value: Int8, forKey k: Key) throws { key(k); state.out.integer(Int(value)) }
    mutating func encode(_ value: Int16, forKey k: Key) throws { key(k); state.out.integer(Int(value)) }
    mutating func encode(_ value: Int32, forKey k: Key) throws { key(k); state.out.integer(Int(value)) }
    mutating func encode(_ value: Int64, forKey k: Key) throws { key(k); state.out.integer(Int(value)) }
    mutating func encode(_ value: UInt, forKey k: Key) throws { key(k); state.writeUnsigned(value) }
    mutating func encode(_ value: UInt8, forKey k: Key) throws { key(k); state.writeUnsigned(value) }
    mutating func encode(_ value: UInt16, forKey k: Key) throws { key(k); state.writeUnsigned(value) }
    mutating func encode(_ value: UInt32, forKey k: Key) throws { key(k); state.writeUnsigned(value) }
    mutating func encode(_ value: UInt64, forKey k: Key) throws { key(k); state.writeUnsigned(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey k: Key) throws {
        key(k)
        // A date needs no coding path (an allocation per field otherwise).
        if state.writeSpecial(value) { return }
        state.keys.append(k)
        defer { state.keys.removeLast() }
        try state.encodeValue(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey k: Key) -> KeyedEncodingContainer<NestedKey> {
        state.unsupported = true
        return KeyedEncodingContainer(FastKeyedEncoding<NestedKey>(state: state, depth: depth, pathCount: pathCount))
    }

    mutating func nestedUnkeyedContainer(forKey k: Key) -> any UnkeyedEncodingContainer {
        state.unsupported = true
        return FastUnkeyedEncoding(state: state, depth: depth, pathCount: pathCount)
    }

    mutating func superEncoder() -> any Encoder {
        state.unsupported = true
        return FastEncoder(state: state, depth: depth, pathCount: pathCount)
    }

    mutating func superEncoder(forKey k: Key) -> any Encoder {
        state.unsupported = true
        return FastEncoder(state: state, depth: depth, pathCount: pathCount)
    }
}

struct FastUnkeyedEncoding: UnkeyedEncodingContainer {
    let state: EncoderState
    let depth: Int
    let pathCount: Int
    var codingPath: [any CodingKey] { state.path(pathCount) }
    var count: Int { state.levels[depth - 1].count }

    private func next() { state.nextElement(depth: depth) }

    mutating func encodeNil() throws { next(); state.out.raw("null") }
    mutating func encode(_ value: Bool) throws { next(); state.out.raw(value ? "true" : "false") }
    mutating func encode(_ value: String) throws { next(); state.out.string(value) }
    mutating func encode(_ value: Double) throws { next(); try state.writeDouble(value, path: codingPath) }
    mutating func encode(_ value: Float) throws { next(); try state.writeDouble(Double(value), path: codingPath) }
    mutating func encode(_ value: Int) throws { next(); state.out.integer(value) }
    mutating func encode(_ value: Int8) throws { next(); state.out.integer(Int(value)) }
    mutating func encode(_ value: Int16) throws { next(); state.out.integer(Int(value)) }
    mutating func encode(_ value: Int32) throws { next(); state.out.integer(Int(value)) }
    mutating func encode(_ value: Int64) throws { next(); state.out.integer(Int(value)) }
    mutating func encode(_ value: UInt) throws { next(); state.writeUnsigned(value) }
    mutating func encode(_ value: UInt8) throws { next(); state.writeUnsigned(value) }
    mutating func encode(_ value: UInt16) throws { next(); state.writeUnsigned(value) }
    mutating func encode(_ value: UInt32) throws { next(); state.writeUnsigned(value) }
    mutating func encode(_ value: UInt64) throws { next(); state.writeUnsigned(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        next()
        try state.encodeValue(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        state.unsupported = true
        return KeyedEncodingContainer(FastKeyedEncoding<NestedKey>(state: state, depth: depth, pathCount: pathCount))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        state.unsupported = true
        return self
    }

    mutating func superEncoder() -> any Encoder {
        state.unsupported = true
        return FastEncoder(state: state, depth: depth, pathCount: pathCount)
    }
}
