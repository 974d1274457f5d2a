import Foundation

/// The members of one object on the tape.
struct TapeKeyedDecoding<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let state: TapeState
    let object: Int
    let depth: Int
    var codingPath: [any CodingKey] { state.prefix(depth) }

    var allKeys: [Key] { state.input.memberNames(of: object).compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { state.input.member(key.stringValue, of: object) != nil }

    private func value(_ key: Key) throws -> Int {
        guard let v = state.input.member(key.stringValue, of: object) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no value for \"\(key.stringValue)\""))
        }
        return v
    }

    /// The member's value, nil when it is absent or null (one lookup for `decodeIfPresent`).
    private func present(_ key: Key) -> Int? {
        guard let v = state.input.member(key.stringValue, of: object), !state.isNull(v) else { return nil }
        return v
    }

    func decodeNil(forKey key: Key) throws -> Bool { state.isNull(try value(key)) }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try state.bool(value(key), codingPath + [key]) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try state.string(value(key), codingPath + [key]) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try state.double(value(key), codingPath + [key]) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try state.double(value(key), codingPath + [key])) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try state.integer(value(key), codingPath + [key], Int.self) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try state.integer(value(key), codingPath + [key], Int8.self) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try state.integer(value(key), codingPath + [key], Int16.self) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try state.integer(value(key), codingPath + [key], Int32.self) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try state.integer(value(key), codingPath + [key], Int64.self) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try state.integer(value(key), codingPath + [key], UInt.self) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try state.integer(value(key), codingPath + [key], UInt8.self) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try state.integer(value(key), codingPath + [key], UInt16.self) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try state.integer(value(key), codingPath + [key], UInt32.self) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try state.integer(value(key), codingPath + [key], UInt64.self) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try state.decode(T.self, at: value(key), depth: depth, key: key)
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try present(key).map { try state.string($0, codingPath + [key]) }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try present(key).map { try state.integer($0, codingPath + [key], Int.self) }
    }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try present(key).map { try state.bool($0, codingPath + [key]) }
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try present(key).map { try state.decode(T.self, at: $0, depth: depth, key: key) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try state.detached(value(key), depth: depth, key: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try state.detached(value(key), depth: depth, key: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        state.detached(state.input.member("super", of: object) ?? -1, depth: depth, key: nil)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        state.detached(state.input.member(key.stringValue, of: object) ?? -1, depth: depth, key: key)
    }
}

/// The elements of one array on the tape, read front to back.
struct TapeUnkeyedDecoding: UnkeyedDecodingContainer {
    let state: TapeState
    let array: Int
    let depth: Int
    var codingPath: [any CodingKey] { state.prefix(depth) }
    var currentIndex = 0
    /// The entry of the next element.
    private var position: Int
    let count: Int?

    init(state: TapeState, array: Int, depth: Int) {
        self.state = state
        self.array = array
        self.depth = depth
        self.position = array + 1
        self.count = Int(state.input.tape[array].count)
    }

    var isAtEnd: Bool { currentIndex >= count! }

    /// The next element's entry and its index.
    private mutating func next(_ type: Any.Type) throws -> (Int, Int) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [IndexKey(intValue: currentIndex)], debugDescription: "unkeyed container is at end"))
        }
        let entry = position
        position = Int(state.input.tape[entry].end)
        currentIndex += 1
        return (entry, currentIndex - 1)
    }

    /// The coding path of element `index` (built only when used).
    private func path(_ index: Int) -> [any CodingKey] { codingPath + [IndexKey(intValue: index)] }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, state.isNull(position) else { return false }
        _ = try next(Any.self)
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { let (n, i) = try next(type); return try state.bool(n, path(i)) }
    mutating func decode(_ type: String.Type) throws -> String { let (n, i) = try next(type); return try state.string(n, path(i)) }
    mutating func decode(_ type: Double.Type) throws -> Double { let (n, i) = try next(type); return try state.double(n, path(i)) }
    mutating func decode(_ type: Float.Type) throws -> Float { let (n, i) = try next(type); return Float(try state.double(n, path(i))) }
    mutating func decode(_ type: Int.Type) throws -> Int { let (n, i) = try next(type); return try state.integer(n, path(i), Int.self) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { let (n, i) = try next(type); return try state.integer(n, path(i), Int8.self) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { let (n, i) = try next(type); return try state.integer(n, path(i), Int16.self) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { let (n, i) = try next(type); return try state.integer(n, path(i), Int32.self) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { let (n, i) = try next(type); return try state.integer(n, path(i), Int64.self) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { let (n, i) = try next(type); return try state.integer(n, path(i), UInt.self) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { let (n, i) = try next(type); return try state.integer(n, path(i), UInt8.self) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { let (n, i) = try next(type); return try state.integer(n, path(i), UInt16.self) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { let (n, i) = try next(type); return try state.integer(n, path(i), UInt32.self) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { let (n, i) = try next(type); return try state.integer(n, path(i), UInt64.self) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (n, i) = try next(type)
        return try state.decode(T.self, at: n, depth: depth, key: IndexKey(intValue: i))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (n, i) = try next([String: Any].self)
        return try state.detached(n, depth: depth, key: IndexKey(intValue: i)).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (n, i) = try next([Any].self)
        return try state.detached(n, depth: depth, key: IndexKey(intValue: i)).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (n, i) = try next(Any.self)
        return state.detached(n, depth: depth, key: IndexKey(intValue: i))
    }
}

/// One value on the tape.
struct TapeSingleValueDecoding: SingleValueDecodingContainer {
    let state: TapeState
    let index: Int
    let depth: Int
    var codingPath: [any CodingKey] { state.prefix(depth) }

    func decodeNil() -> Bool { state.isNull(index) }

    func decode(_ type: Bool.Type) throws -> Bool { try state.bool(index, codingPath) }
    func decode(_ type: String.Type) throws -> String { try state.string(index, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try state.double(index, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { Float(try state.double(index, codingPath)) }
    func decode(_ type: Int.Type) throws -> Int { try state.integer(index, codingPath, Int.self) }
    func decode(_ type: Int8.Type) throws -> Int8 { try state.integer(index, codingPath, Int8.self) }
    func decode(_ type: Int16.Type) throws -> Int16 { try state.integer(index, codingPath, Int16.self) }
    func decode(_ type: Int32.Type) throws -> Int32 { try state.integer(index, codingPath, Int32.self) }
    func decode(_ type: Int64.Type) throws -> Int64 { try state.integer(index, codingPath, Int64.self) }
    func decode(_ type: UInt.Type) throws -> UInt { try state.integer(index, codingPath, UInt.self) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try state.integer(index, codingPath, UInt8.self) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try state.integer(index, codingPath, UInt16.self) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try state.integer(index, codingPath, UInt32.self) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try state.integer(index, codingPath, UInt64.self) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try state.decode(T.self, at: index, depth: depth, key: nil) }
}

/// The coding key of an array element.
struct IndexKey: CodingKey {
    var stringValue: String { "\(intValue!)" }
    var intValue: Int?
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}
