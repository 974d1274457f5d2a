import Messaging
import Outbox
import Synchronization

/// The stream consumers of one process, by stream: what readiness, `system.streams` and the
/// operator's `consumer skip` and `dead-letters` requests act on.
public final class ConsumerRegistry: Sendable {
    private let entries = Mutex<[String: (consumer: StreamConsumer, applier: PostgresEventApplier?)]>([:])

    public init() {}

    /// Registers the consumer of its stream (and its applier, when it applies into PostgreSQL).
    public func add(_ consumer: StreamConsumer, applier: PostgresEventApplier? = nil) {
        entries.withLock { $0[consumer.stream] = (consumer, applier) }
    }

    /// The consumer of `stream`.
    public func consumer(of stream: String) -> StreamConsumer? { entries.withLock { $0[stream]?.consumer } }

    /// The applier of `stream`'s consumer.
    public func applier(of stream: String) -> PostgresEventApplier? { entries.withLock { $0[stream]?.applier } }

    /// The consumers stopped at an event they cannot handle.
    public var blocked: [BlockedConsumer] {
        entries.withLock { $0.values.compactMap(\.consumer.blocked) }.sorted { $0.stream < $1.stream }
    }

    /// `ok`, or which consumers are stopped and where (a readiness check).
    public func check() -> String {
        let b = blocked
        guard !b.isEmpty else { return "ok" }
        return "blocked: " + b.map { "\($0.stream) at \($0.seq) (\($0.type) v\($0.version))" }.joined(separator: ", ")
    }
}
