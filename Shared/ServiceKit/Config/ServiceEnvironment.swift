import Foundation
import Persistence

/// Typed access to the process environment: every setting has a documented default, and a
/// malformed value fails start-up with a message naming the variable.
public struct ServiceEnvironment: Sendable {
    /// The raw variables.
    public let values: [String: String]

    public init(_ values: [String: String] = ProcessInfo.processInfo.environment) {
        self.values = values
    }

    /// A configuration error: which variable, and what is wrong with it.
    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// A string, or `fallback` when unset or empty.
    public func string(_ key: String, _ fallback: String) -> String {
        guard let v = values[key], !v.isEmpty else { return fallback }
        return v
    }

    /// A string or nil when unset or empty.
    public func optional(_ key: String) -> String? {
        guard let v = values[key], !v.isEmpty else { return nil }
        return v
    }

    /// A required string.
    public func required(_ key: String) throws -> String {
        guard let v = optional(key) else { throw Invalid("\(key) must be set") }
        return v
    }

    /// A secret: the value of `name`, or the content of the file that `name_FILE` names (a
    /// Docker or Kubernetes secret mounted as a file) with its trailing line break(s) removed;
    /// nil when neither is set (an empty value counts as unset).
    ///
    /// Throws ``Invalid`` when both `name` and `name_FILE` are set, when the file cannot be
    /// read (naming the variable and the path), or when it is empty. No message carries the
    /// secret itself. The database settings (`DATABASE_URL_FILE`, `PGPASSWORD_FILE`) follow the
    /// same rules (`EnvironmentSecret` in Persistence, which this is).
    public func secret(_ name: String) throws -> String? {
        do {
            return try EnvironmentSecret.read(name, in: values)
        } catch let error as EnvironmentSecret.Invalid {
            throw Invalid(error.description)
        }
    }

    /// An integer within `range`.
    public func int(_ key: String, _ fallback: Int, in range: ClosedRange<Int> = Int.min...Int.max) throws -> Int {
        guard let text = optional(key) else { return fallback }
        guard let v = Int(text), range.contains(v) else {
            throw Invalid("\(key)=\"\(text)\" must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return v
    }

    /// A fraction in 0…1 (such as a sampling ratio).
    public func ratio(_ key: String, _ fallback: Double) throws -> Double {
        guard let text = optional(key) else { return fallback }
        guard let v = Double(text), (0...1).contains(v) else { throw Invalid("\(key)=\"\(text)\" must be a number in 0...1") }
        return v
    }

    /// A boolean: 1/true/yes/on or 0/false/no/off.
    public func bool(_ key: String, _ fallback: Bool) throws -> Bool {
        guard let text = optional(key)?.lowercased() else { return fallback }
        switch text {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw Invalid("\(key)=\"\(text)\" must be true or false")
        }
    }

    /// A duration written as `250ms`, `5s`, `2m`, `1h`, `7d`, or a plain number of seconds.
    public func duration(_ key: String, _ fallback: Duration) throws -> Duration {
        guard let text = optional(key) else { return fallback }
        guard let d = Self.parseDuration(text) else {
            throw Invalid("\(key)=\"\(text)\" must be a duration like 250ms, 5s, 2m, 1h or 7d")
        }
        return d
    }

    /// A comma-separated list (empty entries dropped).
    public func list(_ key: String, _ fallback: [String]) -> [String] {
        guard let text = optional(key) else { return fallback }
        return text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Parses `250ms`, `5s`, `2m`, `1h`, `7d` or a number of seconds.
    public static func parseDuration(_ text: String) -> Duration? {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]
        for (suffix, scale) in units where t.hasSuffix(suffix) {
            guard let n = Double(t.dropLast(suffix.count)), n >= 0 else { return nil }
            return .milliseconds(Int64((n * scale * 1000).rounded()))
        }
        guard let n = Double(t), n >= 0 else { return nil }
        return .milliseconds(Int64((n * 1000).rounded()))
    }
}
