import Foundation

/// Thrown by an applier at an event this build cannot handle: a type it does not know or a
/// payload version newer than the one it reads. Events before it were applied; the consumer
/// stops there, keeping its checkpoint at `seq - 1`, until the service is upgraded or an
/// operator skips the event (``StreamConsumer/skip(seq:reason:)``).
public struct ConsumerBlocked: Error, CustomStringConvertible, Sendable {
    /// The stream.
    public let stream: String
    /// The event the consumer stopped at.
    public let seq: Int64
    /// Its type and payload version.
    public let type: String
    public let version: Int
    /// Why it cannot be handled.
    public let reason: String

    public init(stream: String, seq: Int64, type: String, version: Int, reason: String) {
        self.stream = stream
        self.seq = seq
        self.type = type
        self.version = version
        self.reason = reason
    }

    public var description: String { "blocked at \(stream) event \(seq): \(reason)" }
}
