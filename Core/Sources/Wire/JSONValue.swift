import Foundation

/// Any JSON value, for the few places where the shape is open (error details, patches).
public enum JSONValue: Sendable, Codable, Equatable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let n):
            if n.rounded() == n, abs(n) < 9e15 { try c.encode(Int64(n)) } else { try c.encode(n) }
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    /// The member of an object, if this is one.
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The number as an integer, if this is a whole number.
    public var intValue: Int? {
        if case .number(let n) = self, n.rounded() == n { return Int(n) }
        return nil
    }

    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// Encodes any `Encodable` into a ``JSONValue``.
    public static func from<T: Encodable>(_ value: T) throws -> JSONValue {
        try JSONCoding.decoder().decode(JSONValue.self, from: JSONCoding.encode(value))
    }

    /// Decodes this value as `T`.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONCoding.decoder().decode(T.self, from: JSONCoding.encode(self))
    }
}

/// How every service reads and writes JSON: ``FastJSONEncoder``/``FastJSONDecoder`` with
/// RFC 3339 dates (``ISOTime``); values the fast encoder does not stream fall back to
/// Foundation's `JSONEncoder` with the same date format.
public enum JSONCoding {
    private static let foundationEncoder: JSONEncoder = {
        let e = JSONEncoder()
        e.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(ISOTime.format(date))
        }
        e.outputFormatting = [.withoutEscapingSlashes]
        return e
    }()

    /// The decoder.
    public static func decoder() -> FastJSONDecoder { FastJSONDecoder() }

    /// The encoder.
    public static func encoder() -> Encoder { Encoder() }

    /// Encodes with the fast encoder, or Foundation's when the value needs it.
    public struct Encoder: Sendable {
        public func encode<T: Encodable>(_ value: T) throws -> Data {
            do {
                return try FastJSONEncoder().encode(value)
            } catch is FastJSONEncoder.Unsupported {
                return try foundationEncoder.encode(value)
            }
        }
    }

    /// Encodes a value to JSON bytes.
    public static func encode<T: Encodable>(_ value: T) throws -> Data {
        try Encoder().encode(value)
    }

    /// Decodes JSON bytes, turning decoding errors into a readable one-line message that
    /// names the field (for `CA016`/`CA020` answers).
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        do {
            return try decoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw ServiceError(.validationFailed, describe(error))
        }
    }

    /// A one-line description of a decoding error naming the JSON path.
    public static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            let p = codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return p.isEmpty ? "body" : p.replacingOccurrences(of: ".[", with: "[")
        }
        switch error {
        case .keyNotFound(let key, let ctx):
            return "\(path(ctx.codingPath + [key])) is required"
        case .typeMismatch(let type, let ctx):
            return "\(path(ctx.codingPath)) must be \(describe(type))"
        case .valueNotFound(let type, let ctx):
            return "\(path(ctx.codingPath)) must be \(describe(type)), not null"
        case .dataCorrupted(let ctx):
            if ctx.codingPath.isEmpty { return "body is not valid JSON" }
            return "\(path(ctx.codingPath)): \(ctx.debugDescription)"
        @unknown default:
            return "invalid body"
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type, is Int32.Type: "an integer"
        case is Double.Type, is Float.Type: "a number"
        case is Bool.Type: "true or false"
        case is Date.Type: "an RFC 3339 timestamp"
        default:
            String(describing: type).hasPrefix("Array") ? "an array" : "an object of the expected shape"
        }
    }
}
