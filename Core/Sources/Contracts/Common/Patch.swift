import Foundation
import Wire

/// One field of a partial update: left alone, cleared (`null`), or set.
public enum Patch<T: Codable & Sendable & Equatable>: Sendable, Equatable {
    case unchanged
    case cleared
    case set(T)

    /// The value after applying this patch to `current`.
    public func applied(to current: T?) -> T? {
        switch self {
        case .unchanged: current
        case .cleared: nil
        case .set(let v): v
        }
    }

    /// The new value when set.
    public var value: T? {
        if case .set(let v) = self { return v }
        return nil
    }

    /// Whether the field is mentioned at all.
    public var isPresent: Bool {
        if case .unchanged = self { return false }
        return true
    }
}

/// A coding key for any member name (to list and reject unknown members).
public struct AnyCodingKey: CodingKey, Hashable {
    public var stringValue: String
    public var intValue: Int? { nil }
    public init(_ string: String) { stringValue = string }
    public init?(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { nil }
}

extension KeyedDecodingContainer where Key == AnyCodingKey {
    /// Decodes a patch field: absent → unchanged, `null` → cleared, value → set.
    public func patch<T: Codable & Sendable & Equatable>(_ type: T.Type, _ name: String) throws -> Patch<T> {
        let key = AnyCodingKey(name)
        guard contains(key) else { return .unchanged }
        if try decodeNil(forKey: key) { return .cleared }
        return .set(try decode(T.self, forKey: key))
    }

    /// Rejects members not in `allowed`, naming read-only ones with their reason.
    public func rejectUnknown(allowed: Set<String>, readOnly: [String: String] = [:]) throws {
        for key in allKeys where !allowed.contains(key.stringValue) {
            if let reason = readOnly[key.stringValue] {
                throw ServiceError(.validationFailed, "\(key.stringValue) is read-only: \(reason)")
            }
            throw ServiceError(.validationFailed, "unknown field \"\(key.stringValue)\"")
        }
    }
}

extension KeyedEncodingContainer where Key == AnyCodingKey {
    /// Encodes a patch field (omitted when unchanged).
    public mutating func encode<T: Codable & Sendable & Equatable>(_ patch: Patch<T>, _ name: String) throws {
        switch patch {
        case .unchanged: break
        case .cleared: try encodeNil(forKey: AnyCodingKey(name))
        case .set(let v): try encode(v, forKey: AnyCodingKey(name))
        }
    }
}
