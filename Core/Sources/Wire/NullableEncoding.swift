import Foundation

extension KeyedEncodingContainer {
    /// Encodes an optional as its value or `null`, through the concrete overloads (the
    /// generic `encode(_:forKey:)` of an `Optional` costs a dynamic dispatch per value).
    public mutating func encodeNullable(_ value: String?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    /// Encodes an optional integer as its value or `null`.
    public mutating func encodeNullable(_ value: Int?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    /// Encodes an optional date as its value or `null`.
    public mutating func encodeNullable(_ value: Date?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    /// Encodes an optional array as its value or `null`.
    public mutating func encodeNullable(_ value: [Int]?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
}
