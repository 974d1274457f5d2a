import Foundation

/// A consumer stopped at an event it cannot handle, as health checks, `system.streams` and the
/// operations page report it.
public struct BlockedConsumer: Codable, Sendable, Equatable {
    public var stream: String
    public var seq: Int64
    public var type: String
    public var version: Int
    public var reason: String
    /// When it stopped.
    public var since: Date

    public init(stream: String, seq: Int64, type: String, version: Int, reason: String, since: Date) {
        self.stream = stream
        self.seq = seq
        self.type = type
        self.version = version
        self.reason = reason
        self.since = since
    }
}
