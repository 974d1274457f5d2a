import Foundation

/// A `Decoder` over a compact tree parsed in one pass: faster than Foundation's
/// `JSONDecoder` on message-sized input, with the same error shapes (`DecodingError` with
/// the coding path), so ``JSONCoding/describe(_:)`` names the offending field.
///
/// Dates are RFC 3339 strings (``ISOTime``), `Data` base64, `URL` strings. Integers must be
/// whole numbers in range; duplicate member names keep the last value.
public struct FastJSONDecoder: Sendable {
    public init() {}

    /// Decodes `type` from JSON bytes.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let root: JSONNode
        do {
            root = try data.withUnsafeBytes { raw in
                var parser = JSONTreeParser(raw)
                let node = try parser.parseValue(depth: 0)
                parser.skipWhitespace()
                guard parser.atEnd else { throw JSONTreeParser.Failure(message: "trailing bytes", offset: parser.offset) }
                return node
            }
        } catch let failure as JSONTreeParser.Failure {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "The given data was not valid JSON: \(failure.message) at byte \(failure.offset)"))
        }
        return try NodeDecoding.decode(T.self, from: root, in: DecodePath())
    }
}

/// A parsed JSON value. Numbers keep their text so 64-bit integers stay exact.
enum JSONNode {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONNode])
    case object([(String, JSONNode)])

    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

struct JSONTreeParser {
    struct Failure: Error {
        let message: String
        let offset: Int
    }

    private let bytes: UnsafeRawBufferPointer
    private(set) var offset = 0
    /// The members and elements of the objects and arrays being parsed, as stacks: each
    /// container's end copies its own into an array of the exact size (one allocation, where
    /// appending to a growing array was one per doubling).
    private var members: [(String, JSONNode)] = []
    private var elements: [JSONNode] = []

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var atEnd: Bool { offset >= bytes.count }

    mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    private func fail(_ message: String) -> Failure { Failure(message: message, offset: offset) }

    mutating func parseValue(depth: Int) throws -> JSONNode {
        guard depth < 512 else { throw fail("nesting too deep") }
        skipWhitespace()
        guard offset < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[offset] {
        case UInt8(ascii: "{"):
            offset += 1
            skipWhitespace()
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") {
                offset += 1
                return .object([])
            }
            let base = members.count
            defer { members.removeSubrange(base...) }
            while true {
                skipWhitespace()
                guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
                let key = try parseString()
                skipWhitespace()
                guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                offset += 1
                let value = try parseValue(depth: depth + 1)
                members.append((key, value))
                skipWhitespace()
                guard offset < bytes.count else { throw fail("unterminated object") }
                if bytes[offset] == UInt8(ascii: ",") { offset += 1; continue }
                if bytes[offset] == UInt8(ascii: "}") { offset += 1; return .object(Array(members[base...])) }
                throw fail("expected ',' or '}'")
            }
        case UInt8(ascii: "["):
            offset += 1
            skipWhitespace()
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") {
                offset += 1
                return .array([])
            }
            let base = elements.count
            defer { elements.removeSubrange(base...) }
            while true {
                elements.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                guard offset < bytes.count else { throw fail("unterminated array") }
                if bytes[offset] == UInt8(ascii: ",") { offset += 1; continue }
                if bytes[offset] == UInt8(ascii: "]") { offset += 1; return .array(Array(elements[base...])) }
                throw fail("expected ',' or ']'")
            }
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try parseNumber())
        default:
            throw fail("unexpected character")
        }
    }

    private mutating func literal(_ word: StaticString) throws {
        let n = word.utf8CodeUnitCount
        guard offset + n <= bytes.count else { throw fail("bad literal") }
        let p = word.utf8Start
        for k in 0..<n where bytes[offset + k] != p[k] { throw fail("bad literal") }
        offset += n
    }

    private mutating func parseNumber() throws -> String {
        let start = offset
        if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        var digits = 0
        while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 { offset += 1; digits += 1 }
        guard digits > 0 else { throw fail("bad number") }
        if digits > 1, bytes[start + (bytes[start] == UInt8(ascii: "-") ? 1 : 0)] == 0x30 { throw fail("leading zero in number") }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            var frac = 0
            while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 { offset += 1; frac += 1 }
            guard frac > 0 else { throw fail("bad number") }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            var exp = 0
            while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 { offset += 1; exp += 1 }
            guard exp > 0 else { throw fail("bad number") }
        }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
    }

    private mutating func parseString() throws -> String {
        var scanner = JSONScanner(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
        do {
            let s = try scanner.decodeString()
            offset += scanner.position
            return s
        } catch let e as JSONScanner.Failure {
            throw Failure(message: "\(e)", offset: offset)
        }
    }
}

/// The keys leading to the value being decoded, one array shared by a decoding's containers:
/// a member's key is pushed while its value decodes and popped after, so a container's coding
/// path is a length into this array, built only when read (an error, or code that asks). A
/// `codingPath + [key]` per nested value was an allocation each.
final class DecodePath {
    var keys: [any CodingKey]

    init(_ keys: [any CodingKey] = []) { self.keys = keys }

    /// The coding path of a container `depth` keys deep.
    func prefix(_ depth: Int) -> [any CodingKey] { Array(keys.prefix(depth)) }

    /// Decodes `node` as the member `key` (nil: the same value, as a single-value container
    /// does) of a container `depth` keys deep. A container used after a sibling's value moved
    /// on (decoding code that kept it) gets a path of its own instead of this shared one.
    func decode<T: Decodable>(_ type: T.Type, _ node: JSONNode, depth: Int, key: (any CodingKey)?) throws -> T {
        let stack = keys.count == depth ? self : DecodePath(prefix(depth))
        guard let key else { return try NodeDecoding.decode(type, from: node, in: stack) }
        stack.keys.append(key)
        defer { stack.keys.removeLast() }
        return try NodeDecoding.decode(type, from: node, in: stack)
    }

    /// A decoder of the member `key` of a container `depth` keys deep with a path of its own
    /// (nested containers and super decoders, which may be kept and used out of order).
    func detached(_ node: JSONNode, depth: Int, key: (any CodingKey)?) -> NodeDecoder {
        let path = DecodePath(prefix(depth) + (key.map { [$0] } ?? []))
        return NodeDecoder(node: node, stack: path, depth: path.keys.count)
    }
}

/// Decoding values out of ``JSONNode``s.
enum NodeDecoding {
    /// Decodes `node` at the path `stack` holds now.
    static func decode<T: Decodable>(_ type: T.Type, from node: JSONNode, in stack: DecodePath) throws -> T {
        let depth = stack.keys.count
        if let primitive = try primitive(type, node, stack.prefix(depth)) { return primitive }
        if let special = try special(type, node, stack.prefix(depth)) { return special }
        return try T(from: NodeDecoder(node: node, stack: stack, depth: depth))
    }

    /// Strings, integers, booleans and doubles reached through generic code (the elements of
    /// `[String]`, say): read here, as the containers' concrete overloads do, instead of through
    /// `T(from:)` and a single-value container (two existential boxes per element).
    static func primitive<T>(_ type: T.Type, _ node: JSONNode, _ path: @autoclosure () -> [any CodingKey]) throws -> T? {
        if T.self == String.self { return unsafeBitCast(try string(node, path()), to: T.self) }
        if T.self == Int.self { return unsafeBitCast(try integer(node, path(), Int.self), to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try bool(node, path()), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try double(node, path()), to: T.self) }
        if T.self == Int64.self { return unsafeBitCast(try integer(node, path(), Int64.self), to: T.self) }
        return nil
    }

    /// Dates, URLs, data and decimals, which have a fixed JSON form.
    static func special<T>(_ type: T.Type, _ node: JSONNode, _ path: @autoclosure () -> [any CodingKey]) throws -> T? {
        if T.self == Date.self {
            let text = try string(node, path(), Date.self)
            guard let date = ISOTime.parse(text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path(), debugDescription: "expected an RFC 3339 timestamp, got \"\(text)\""))
            }
            return (date as! T)
        }
        if T.self == URL.self {
            let text = try string(node, path(), URL.self)
            guard let url = URL(string: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path(), debugDescription: "invalid URL \"\(text)\""))
            }
            return (url as! T)
        }
        if T.self == Data.self {
            let text = try string(node, path(), Data.self)
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path(), debugDescription: "invalid base64"))
            }
            return (data as! T)
        }
        if T.self == Decimal.self {
            guard case .number(let text) = node, let d = Decimal(string: text) else { throw mismatch(Decimal.self, node, path()) }
            return (d as! T)
        }
        return nil
    }

    static func mismatch(_ type: Any.Type, _ node: JSONNode, _ path: @autoclosure () -> [any CodingKey]) -> DecodingError {
        if case .null = node {
            return .valueNotFound(type, .init(codingPath: path(), debugDescription: "expected \(type) but found null"))
        }
        return .typeMismatch(type, .init(codingPath: path(), debugDescription: "expected \(type) but found \(node.kindName)"))
    }

    static func string(_ node: JSONNode, _ path: @autoclosure () -> [any CodingKey], _ type: Any.Type = String.self) throws -> String {
        guard case .string(let s) = node else { throw mismatch(type, node, path()) }
        return s
    }

    static func bool(_ node: JSONNode, _ path: @autoclosure () -> [any CodingKey]) throws -> Bool {
        guard case .bool(let b) = node else { throw mismatch(Bool.self, node, path()) }
        return b
    }

    static func double(_ node: JSONNode, _ path: @autoclosure () -> [any CodingKey]) throws -> Double {
        guard case .number(let text) = node, let d = Double(text) else { throw mismatch(Double.self, node, path()) }
        return d
    }

    static func integer<I: FixedWidthInteger>(_ node: JSONNode, _ path: @autoclosure () -> [any CodingKey], _ type: I.Type) throws -> I {
        guard case .number(let text) = node else { throw mismatch(I.self, node, path()) }
        if let v = I(text) { return v }
        if let d = Double(text), d.rounded() == d, let v = I(exactly: d) { return v }
        throw DecodingError.dataCorrupted(.init(codingPath: path(), debugDescription: "number \(text) does not fit in \(I.self)"))
    }
}

struct NodeDecoder: Decoder {
    let node: JSONNode
    let stack: DecodePath
    let depth: Int
    var codingPath: [any CodingKey] { stack.prefix(depth) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = node else {
            throw NodeDecoding.mismatch([String: Any].self, node, codingPath)
        }
        return KeyedDecodingContainer(NodeKeyedDecoding<Key>(members: members, stack: stack, depth: depth))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = node else { throw NodeDecoding.mismatch([Any].self, node, codingPath) }
        return NodeUnkeyedDecoding(elements: elements, stack: stack, depth: depth)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        NodeSingleValueDecoding(node: node, stack: stack, depth: depth)
    }
}

struct NodeKeyedDecoding<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [(String, JSONNode)]
    let stack: DecodePath
    let depth: Int
    var codingPath: [any CodingKey] { stack.prefix(depth) }

    var allKeys: [Key] { members.compactMap { Key(stringValue: $0.0) } }

    func contains(_ key: Key) -> Bool { find(key) != nil }

    private func find(_ key: Key) -> JSONNode? {
        let name = key.stringValue
        for k in stride(from: members.count - 1, through: 0, by: -1) where members[k].0 == name { return members[k].1 }
        return nil
    }

    private func node(_ key: Key) throws -> JSONNode {
        guard let n = find(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no value for \"\(key.stringValue)\""))
        }
        return n
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try node(key) { return true }
        return false
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try NodeDecoding.bool(node(key), codingPath + [key]) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try NodeDecoding.string(node(key), codingPath + [key]) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try NodeDecoding.double(node(key), codingPath + [key]) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try NodeDecoding.double(node(key), codingPath + [key])) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try NodeDecoding.integer(node(key), codingPath + [key], Int.self) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try NodeDecoding.integer(node(key), codingPath + [key], Int8.self) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try NodeDecoding.integer(node(key), codingPath + [key], Int16.self) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try NodeDecoding.integer(node(key), codingPath + [key], Int32.self) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try NodeDecoding.integer(node(key), codingPath + [key], Int64.self) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try NodeDecoding.integer(node(key), codingPath + [key], UInt.self) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try NodeDecoding.integer(node(key), codingPath + [key], UInt8.self) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try NodeDecoding.integer(node(key), codingPath + [key], UInt16.self) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try NodeDecoding.integer(node(key), codingPath + [key], UInt32.self) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try NodeDecoding.integer(node(key), codingPath + [key], UInt64.self) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try stack.decode(T.self, node(key), depth: depth, key: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try stack.detached(node(key), depth: depth, key: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try stack.detached(node(key), depth: depth, key: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        stack.detached(members.last(where: { $0.0 == "super" })?.1 ?? .null, depth: depth, key: nil)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        stack.detached(find(key) ?? .null, depth: depth, key: key)
    }
}

struct NodeUnkeyedDecoding: UnkeyedDecodingContainer {
    let elements: [JSONNode]
    let stack: DecodePath
    let depth: Int
    var codingPath: [any CodingKey] { stack.prefix(depth) }
    var currentIndex = 0

    init(elements: [JSONNode], stack: DecodePath, depth: Int) {
        self.elements = elements
        self.stack = stack
        self.depth = depth
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private var indexKey: any CodingKey { IndexKey(intValue: currentIndex) }

    /// The next element and its index.
    private mutating func next(_ type: Any.Type) throws -> (JSONNode, Int) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [indexKey], debugDescription: "unkeyed container is at end"))
        }
        let node = elements[currentIndex]
        currentIndex += 1
        return (node, currentIndex - 1)
    }

    /// The coding path of element `index` (built only when used).
    private func path(_ index: Int) -> [any CodingKey] { codingPath + [IndexKey(intValue: index)] }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        if case .null = elements[currentIndex] {
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { let (n, i) = try next(type); return try NodeDecoding.bool(n, path(i)) }
    mutating func decode(_ type: String.Type) throws -> String { let (n, i) = try next(type); return try NodeDecoding.string(n, path(i)) }
    mutating func decode(_ type: Double.Type) throws -> Double { let (n, i) = try next(type); return try NodeDecoding.double(n, path(i)) }
    mutating func decode(_ type: Float.Type) throws -> Float { let (n, i) = try next(type); return Float(try NodeDecoding.double(n, path(i))) }
    mutating func decode(_ type: Int.Type) throws -> Int { let (n, i) = try next(type); return try NodeDecoding.integer(n, path(i), Int.self) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { let (n, i) = try next(type); return try NodeDecoding.integer(n, path(i), Int8.self) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { let (n, i) = try next(type); return try NodeDecoding.integer(n, path(i), Int16.self) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { let (n, i) = try next(type); return try NodeDecoding.integer(n, path(i), Int32.self) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { let (n, i) = try next(type); return try NodeDecoding.integer(n, path(i), Int64.self) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { let (n, i) = try next(type); return try NodeDecoding.integer(n, path(i), UInt.self) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { let (n, i) = try next(type); return try NodeDecoding.integer(n, path(i), UInt8.self) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { let (n, i) = try next(type); return try NodeDecoding.integer(n, path(i), UInt16.self) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { let (n, i) = try next(type); return try NodeDecoding.integer(n, path(i), UInt32.self) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { let (n, i) = try next(type); return try NodeDecoding.integer(n, path(i), UInt64.self) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (n, i) = try next(type)
        return try stack.decode(T.self, n, depth: depth, key: IndexKey(intValue: i))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (n, i) = try next([String: Any].self)
        return try stack.detached(n, depth: depth, key: IndexKey(intValue: i)).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (n, i) = try next([Any].self)
        return try stack.detached(n, depth: depth, key: IndexKey(intValue: i)).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (n, i) = try next(Any.self)
        return stack.detached(n, depth: depth, key: IndexKey(intValue: i))
    }
}

struct NodeSingleValueDecoding: SingleValueDecodingContainer {
    let node: JSONNode
    let stack: DecodePath
    let depth: Int
    var codingPath: [any CodingKey] { stack.prefix(depth) }

    func decodeNil() -> Bool {
        if case .null = node { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool { try NodeDecoding.bool(node, codingPath) }
    func decode(_ type: String.Type) throws -> String { try NodeDecoding.string(node, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try NodeDecoding.double(node, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { Float(try NodeDecoding.double(node, codingPath)) }
    func decode(_ type: Int.Type) throws -> Int { try NodeDecoding.integer(node, codingPath, Int.self) }
    func decode(_ type: Int8.Type) throws -> Int8 { try NodeDecoding.integer(node, codingPath, Int8.self) }
    func decode(_ type: Int16.Type) throws -> Int16 { try NodeDecoding.integer(node, codingPath, Int16.self) }
    func decode(_ type: Int32.Type) throws -> Int32 { try NodeDecoding.integer(node, codingPath, Int32.self) }
    func decode(_ type: Int64.Type) throws -> Int64 { try NodeDecoding.integer(node, codingPath, Int64.self) }
    func decode(_ type: UInt.Type) throws -> UInt { try NodeDecoding.integer(node, codingPath, UInt.self) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try NodeDecoding.integer(node, codingPath, UInt8.self) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try NodeDecoding.integer(node, codingPath, UInt16.self) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try NodeDecoding.integer(node, codingPath, UInt32.self) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try NodeDecoding.integer(node, codingPath, UInt64.self) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try stack.decode(T.self, node, depth: depth, key: nil) }
}

/// The coding key of an array element.
struct IndexKey: CodingKey {
    var stringValue: String { "\(intValue!)" }
    var intValue: Int?
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}
