import Foundation

/// A `Decoder` that fills the value straight from the bytes: one pass records where each value
/// is (``TapeEntry``, a flat array, no tree), and the containers read strings and numbers out of
/// the input only when the value asks for them. Member lookups start where the previous one
/// ended, since code reads members in the order they were written. Errors have Foundation's
/// shapes (`DecodingError` with the coding path), so ``JSONCoding/describe(_:)`` names the
/// offending field.
///
/// Dates are RFC 3339 strings (``ISOTime``), `Data` base64, `URL` strings. Integers must be
/// whole numbers in range; duplicate member names keep the last value.
public struct FastJSONDecoder: Sendable {
    public init() {}

    /// Decodes `type` from JSON bytes.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let input: TapeInput
        do {
            input = try TapeInput(data: data)
        } catch let error as JSONTapeParser.Failure {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "The given data was not valid JSON: \(error.message) at byte \(error.offset)"))
        }
        return try TapeState(input: input).decode(T.self, at: 0)
    }
}

/// The input of one decoding: its bytes and their tape, shared by every container of it.
final class TapeInput {
    let data: Data
    var tape: [TapeEntry]

    /// Parses `data` (the tape is held here alone, so recording a lookup's place never copies it).
    init(data: Data) throws {
        self.data = data
        self.tape = try data.withUnsafeBytes { try JSONTapeParser.parse($0) }
    }

    /// The entry at `index`; -1 stands for an absent value read as null (a missing `super`).
    func entry(_ index: Int) -> TapeEntry {
        index >= 0 ? tape[index] : TapeEntry(kind: .null, start: 0)
    }

    /// The value entry of the member `name` of the object at `object`, or nil.
    func member(_ name: String, of object: Int) -> Int? {
        let o = tape[object]
        guard o.count > 0 else { return nil }
        return data.withUnsafeBytes { bytes -> Int? in
            if o.flag {
                // Repeated names: the last one counts.
                var found: Int?
                var k = object + 1
                for _ in 0..<o.count {
                    if JSONTapeText.equals(tape[k], name, in: bytes) { found = k + 1 }
                    k = Int(tape[k + 1].end)
                }
                return found
            }
            let first = object + 1, end = Int(o.end)
            var k = Int(o.hint)
            for _ in 0..<o.count {
                if k >= end { k = first }
                if JSONTapeText.equals(tape[k], name, in: bytes) {
                    tape[object].hint = Int32(k)
                    return k + 1
                }
                k = Int(tape[k + 1].end)
            }
            return nil
        }
    }

    /// The member names of the object at `object`, in order.
    func memberNames(of object: Int) -> [String] {
        let o = tape[object]
        var names: [String] = []
        names.reserveCapacity(Int(o.count))
        var k = object + 1
        for _ in 0..<o.count {
            if let name = try? string(k) { names.append(name) }
            k = Int(tape[k + 1].end)
        }
        return names
    }

    func string(_ index: Int) throws -> String {
        let e = tape[index]
        do {
            return try data.withUnsafeBytes { try JSONTapeText.string(e, in: $0) }
        } catch {
            // The parser checked every escape; kept as a decoding error all the same.
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(error)"))
        }
    }

    func numberText(_ index: Int) -> String {
        let e = tape[index]
        return data.withUnsafeBytes { JSONTapeText.numberText(e, in: $0) }
    }
}

/// The keys leading to the value being decoded, one array shared by a decoding's containers:
/// a member's key is pushed while its value decodes and popped after, so a container's coding
/// path is a length into this array, built only when read (an error, or code that asks). A
/// container used after a sibling's value moved on (decoding code that kept it) gets a state of
/// its own, with its own path.
final class TapeState {
    let input: TapeInput
    var keys: [any CodingKey]

    init(input: TapeInput, keys: [any CodingKey] = []) {
        self.input = input
        self.keys = keys
        self.keys.reserveCapacity(keys.count + 8)
    }

    /// The coding path of a container `depth` keys deep.
    func prefix(_ depth: Int) -> [any CodingKey] { Array(keys.prefix(depth)) }

    /// Decodes the value at `index` at the path the keys hold now.
    func decode<T: Decodable>(_ type: T.Type, at index: Int) throws -> T {
        let depth = keys.count
        if let primitive = try primitive(type, index, prefix(depth)) { return primitive }
        if let special = try special(type, index, prefix(depth)) { return special }
        return try T(from: TapeDecoder(state: self, index: index, depth: depth))
    }

    /// Decodes the value at `index` as the member `key` (nil: the same value, as a single-value
    /// container does) of a container `depth` keys deep.
    func decode<T: Decodable>(_ type: T.Type, at index: Int, depth: Int, key: (any CodingKey)?) throws -> T {
        let stack = keys.count == depth ? self : TapeState(input: input, keys: prefix(depth))
        guard let key else { return try stack.decode(type, at: index) }
        stack.keys.append(key)
        defer { stack.keys.removeLast() }
        return try stack.decode(type, at: index)
    }

    /// A decoder of the member `key` of a container `depth` keys deep with a path of its own
    /// (nested containers and super decoders, which may be kept and used out of order).
    func detached(_ index: Int, depth: Int, key: (any CodingKey)?) -> TapeDecoder {
        let state = TapeState(input: input, keys: prefix(depth) + (key.map { [$0] } ?? []))
        return TapeDecoder(state: state, index: index, depth: state.keys.count)
    }

    // MARK: - Values

    /// Strings, integers, booleans and doubles reached through generic code (the elements of
    /// `[String]`, say): read here, as the containers' concrete overloads do, instead of through
    /// `T(from:)` and a single-value container.
    func primitive<T>(_ type: T.Type, _ index: Int, _ path: @autoclosure () -> [any CodingKey]) throws -> T? {
        if T.self == String.self { return unsafeBitCast(try string(index, path()), to: T.self) }
        if T.self == Int.self { return unsafeBitCast(try integer(index, path(), Int.self), to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try bool(index, path()), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try double(index, path()), to: T.self) }
        if T.self == Int64.self { return unsafeBitCast(try integer(index, path(), Int64.self), to: T.self) }
        if T.self == [String].self { return unsafeBitCast(try elements(index, path()) { try string($0, []) }, to: T.self) }
        if T.self == [Int].self { return unsafeBitCast(try elements(index, path()) { try integer($0, [], Int.self) }, to: T.self) }
        return nil
    }

    /// An array of strings or integers, read into an array of its exact size (`Array.init(from:)`
    /// appends, one allocation per doubling). `read` reports errors at an empty path.
    private func elements<E>(_ index: Int, _ path: @autoclosure () -> [any CodingKey], _ read: (Int) throws -> E) throws -> [E] {
        let e = input.entry(index)
        guard e.kind == .array else { throw mismatch([E].self, e, path()) }
        var out: [E] = []
        out.reserveCapacity(Int(e.count))
        var position = index + 1
        for k in 0..<Int(e.count) {
            do {
                out.append(try read(position))
            } catch let error as DecodingError {
                throw Self.prefixed(error, path() + [IndexKey(intValue: k)])
            }
            position = Int(input.tape[position].end)
        }
        return out
    }

    /// `error` with `prefix` before its coding path.
    static func prefixed(_ error: DecodingError, _ prefix: [any CodingKey]) -> DecodingError {
        func moved(_ c: DecodingError.Context) -> DecodingError.Context {
            .init(codingPath: prefix + c.codingPath, debugDescription: c.debugDescription, underlyingError: c.underlyingError)
        }
        switch error {
        case .typeMismatch(let t, let c): return .typeMismatch(t, moved(c))
        case .valueNotFound(let t, let c): return .valueNotFound(t, moved(c))
        case .keyNotFound(let k, let c): return .keyNotFound(k, moved(c))
        case .dataCorrupted(let c): return .dataCorrupted(moved(c))
        @unknown default: return error
        }
    }

    /// Dates, URLs, data and decimals, which have a fixed JSON form.
    func special<T>(_ type: T.Type, _ index: Int, _ path: @autoclosure () -> [any CodingKey]) throws -> T? {
        if T.self == Date.self {
            let e = input.entry(index)
            guard e.kind == .string else { throw mismatch(Date.self, e, path()) }
            let ms = e.flag ? ISOTime.parseEpochMilliseconds(try input.string(index))
                : input.data.withUnsafeBytes { ISOTime.parseEpochMilliseconds(UnsafeRawBufferPointer(rebasing: $0[Int(e.start)..<Int(e.start + e.length)])) }
            guard let ms else {
                throw DecodingError.dataCorrupted(.init(codingPath: path(), debugDescription: "expected an RFC 3339 timestamp, got \"\((try? input.string(index)) ?? "")\""))
            }
            return (Date(timeIntervalSince1970: Double(ms) / 1000) as! T)
        }
        if T.self == URL.self {
            let text = try string(index, path(), URL.self)
            guard let url = URL(string: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path(), debugDescription: "invalid URL \"\(text)\""))
            }
            return (url as! T)
        }
        if T.self == Data.self {
            let text = try string(index, path(), Data.self)
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path(), debugDescription: "invalid base64"))
            }
            return (data as! T)
        }
        if T.self == Decimal.self {
            let e = input.entry(index)
            guard e.kind == .number, let d = Decimal(string: input.numberText(index)) else { throw mismatch(Decimal.self, e, path()) }
            return (d as! T)
        }
        return nil
    }

    func mismatch(_ type: Any.Type, _ e: TapeEntry, _ path: @autoclosure () -> [any CodingKey]) -> DecodingError {
        if e.kind == .null {
            return .valueNotFound(type, .init(codingPath: path(), debugDescription: "expected \(type) but found null"))
        }
        return .typeMismatch(type, .init(codingPath: path(), debugDescription: "expected \(type) but found \(e.kindName)"))
    }

    func isNull(_ index: Int) -> Bool { input.entry(index).kind == .null }

    func string(_ index: Int, _ path: @autoclosure () -> [any CodingKey], _ type: Any.Type = String.self) throws -> String {
        let e = input.entry(index)
        guard e.kind == .string else { throw mismatch(type, e, path()) }
        return try input.string(index)
    }

    func bool(_ index: Int, _ path: @autoclosure () -> [any CodingKey]) throws -> Bool {
        switch input.entry(index).kind {
        case .true: return true
        case .false: return false
        default: throw mismatch(Bool.self, input.entry(index), path())
        }
    }

    func double(_ index: Int, _ path: @autoclosure () -> [any CodingKey]) throws -> Double {
        let e = input.entry(index)
        guard e.kind == .number else { throw mismatch(Double.self, e, path()) }
        if let whole = input.data.withUnsafeBytes({ JSONTapeText.integer(e, in: $0, as: Int64.self) }),
           whole != 0, whole.magnitude < 1 << 53 {
            return Double(whole)
        }
        guard let d = Double(input.numberText(index)) else { throw mismatch(Double.self, e, path()) }
        return d
    }

    func integer<I: FixedWidthInteger>(_ index: Int, _ path: @autoclosure () -> [any CodingKey], _ type: I.Type) throws -> I {
        let e = input.entry(index)
        guard e.kind == .number else { throw mismatch(I.self, e, path()) }
        if let v = input.data.withUnsafeBytes({ JSONTapeText.integer(e, in: $0, as: I.self) }) { return v }
        let text = input.numberText(index)
        if e.flag, let d = Double(text), d.rounded() == d, let v = I(exactly: d) { return v }
        throw DecodingError.dataCorrupted(.init(codingPath: path(), debugDescription: "number \(text) does not fit in \(I.self)"))
    }
}

extension TapeEntry {
    var kindName: String {
        switch kind {
        case .null: "null"
        case .true, .false: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// The `Decoder` of one value: three words, so passing it as `any Decoder` needs no box.
struct TapeDecoder: Decoder {
    let state: TapeState
    let index: Int
    let depth: Int
    var codingPath: [any CodingKey] { state.prefix(depth) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let e = state.input.entry(index)
        guard e.kind == .object else { throw state.mismatch([String: Any].self, e, codingPath) }
        return KeyedDecodingContainer(TapeKeyedDecoding<Key>(state: state, object: index, depth: depth))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let e = state.input.entry(index)
        guard e.kind == .array else { throw state.mismatch([Any].self, e, codingPath) }
        return TapeUnkeyedDecoding(state: state, array: index, depth: depth)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        TapeSingleValueDecoding(state: state, index: index, depth: depth)
    }
}
