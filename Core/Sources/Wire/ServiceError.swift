import Foundation

/// An error that crosses a service boundary: `{code, message}` with a CA code.
///
/// Thrown by handlers, carried in `rpc.error` replies, rethrown by ``RPCClient`` and turned
/// into an HTTP response by the gateway. `details` carries structured extras (e.g. the current
/// document on a `CA010` conflict, or `retryAfterSeconds` on `CA019`).
public struct ServiceError: Error, Sendable, Codable, Equatable, CustomStringConvertible {
    /// The CA code.
    public var code: ErrorCode
    /// A human-readable explanation naming the offending field where there is one.
    public var message: String
    /// Optional structured data (raw JSON object).
    public var details: JSONValue?

    public init(_ code: ErrorCode, _ message: String, details: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.details = details
    }

    public var description: String { "\(code.rawValue) \(code.name): \(message)" }

    // Convenience constructors for the common cases.
    public static func validation(_ message: String) -> ServiceError { .init(.validationFailed, message) }
    public static func notFound(_ message: String) -> ServiceError { .init(.notFound, message) }
    public static func permissionDenied(_ message: String = "permission denied") -> ServiceError { .init(.permissionDenied, message) }
    public static func `internal`(_ message: String = "internal error") -> ServiceError { .init(.internalError, message) }
    /// `CA019`, with the whole seconds to wait before trying again (`retryAfterSeconds`, at
    /// least 1), which the gateway sends as `Retry-After`.
    public static func rateLimited(_ message: String, retryAfter seconds: Int) -> ServiceError {
        .init(.rateLimited, message, details: .object(["retryAfterSeconds": .number(Double(max(1, seconds)))]))
    }
}
