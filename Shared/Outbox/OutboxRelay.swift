import Foundation
import Logging
import Messaging
import Persistence
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Numbers committed outbox rows of one stream and sends them to an ``EventSink``.
///
/// Sequence numbers are assigned under a row lock on `outbox_streams`, in a transaction, in
/// the order the relay sees the rows; several relays of the same stream (scheduler replicas)
/// take turns on that lock, so numbers never repeat or skip. Numbering happens before sending:
/// a crash after the commit and before the send leaves numbered rows that consumers fetch by
/// replay once the next heartbeat shows them the head; a crash before numbering leaves rows
/// the relay picks up when it starts again. The relay wakes on ``wake()`` (a commit in this
/// process) or polls every `pollInterval` (commits elsewhere, restarts).
public final class OutboxRelay: Service, Sendable {
    public let stream: String
    private let database: Database
    private let sink: any EventSink
    private let telemetry: Telemetry
    private let signal = WakeSignal()
    private let pollInterval: Duration
    private let heartbeatInterval: Duration
    private let batchSize: Int
    private let retention: Duration
    private let lastHead = Atomic<Int64>(0)

    public init(database: Database, stream: String, sink: any EventSink, telemetry: Telemetry,
                pollInterval: Duration = .milliseconds(250), heartbeatInterval: Duration = .seconds(1),
                batchSize: Int = 1000, retention: Duration = .seconds(7 * 86_400)) {
        self.database = database
        self.stream = stream
        self.sink = sink
        self.telemetry = telemetry
        self.pollInterval = pollInterval
        self.heartbeatInterval = heartbeatInterval
        self.batchSize = batchSize
        self.retention = retention
    }

    /// Asks the relay to look for new rows now.
    public func wake() { signal.signal() }

    /// The highest sequence number this relay has seen assigned.
    public var head: Int64 { lastHead.load(ordering: .relaxed) }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            let clock = ContinuousClock()
            var nextHeartbeat = clock.now
            var nextCleanup = clock.now + .seconds(60)
            while !Task.isCancelled {
                do {
                    var more = true
                    while more && !Task.isCancelled {
                        more = try await self.relayBatch() == self.batchSize
                    }
                    if clock.now >= nextHeartbeat {
                        try await self.heartbeat()
                        nextHeartbeat = clock.now + self.heartbeatInterval
                    }
                    if clock.now >= nextCleanup {
                        try await self.cleanup()
                        nextCleanup = clock.now + .seconds(3600)
                    }
                } catch {
                    if Task.isCancelled { break }
                    self.telemetry.logger.warning("outbox relay failed; retrying", metadata: ["stream": "\(self.stream)", "error": "\(String(reflecting: error))"])
                    try? await Task.sleep(for: .milliseconds(500))
                }
                let untilHeartbeat = clock.now.duration(to: nextHeartbeat)
                await self.signal.wait(timeout: min(self.pollInterval, max(.milliseconds(1), untilHeartbeat)))
            }
        }
        // Send what was committed before the shutdown began.
        _ = try? await relayBatch()
    }

    /// Numbers and sends one batch; returns how many rows it took.
    @discardableResult
    public func relayBatch() async throws -> Int {
        let logger = telemetry.logger
        let stream = self.stream
        let limit = batchSize
        let events: [(seq: Int64, envelope: Data)] = try await database.transaction { connection in
            try await connection.query("INSERT INTO outbox_streams (stream) VALUES (\(stream)) ON CONFLICT DO NOTHING", logger: logger)
            let last = try await connection.query("SELECT last_seq FROM outbox_streams WHERE stream = \(stream) FOR UPDATE", logger: logger)
                .first(Int64.self) ?? 0
            var ids: [Int64] = []
            var bodies: [String] = []
            let rows = try await connection.query("""
                SELECT id, envelope FROM outbox WHERE stream = \(stream) AND seq IS NULL ORDER BY id LIMIT \(limit)
                """, logger: logger)
            for try await (id, body) in rows.decode((Int64, String).self) {
                ids.append(id)
                bodies.append(body)
            }
            guard !ids.isEmpty else { return [] }
            let seqs = (1...Int64(ids.count)).map { last + $0 }
            try await connection.query("""
                UPDATE outbox SET seq = v.seq, published_at = now()
                FROM unnest(\(ids)::bigint[], \(seqs)::bigint[]) AS v(id, seq)
                WHERE outbox.id = v.id AND outbox.seq IS NULL
                """, logger: logger)
            try await connection.query("UPDATE outbox_streams SET last_seq = \(seqs.last!) WHERE stream = \(stream)", logger: logger)
            return zip(seqs, bodies).map { (seq: $0, envelope: Data($1.utf8)) }
        }
        guard let last = events.last else { return 0 }
        sink.publish(stream: stream, events: events)
        lastHead.store(last.seq, ordering: .relaxed)
        telemetry.counter("chronir_outbox_published_total", [("stream", stream)]).increment(by: events.count)
        return events.count
    }

    private func heartbeat() async throws {
        let head = try await database.query("SELECT last_seq FROM outbox_streams WHERE stream = \(stream)").first(Int64.self) ?? 0
        lastHead.store(head, ordering: .relaxed)
        sink.heartbeat(stream: stream, head: head)
    }

    private func cleanup() async throws {
        let seconds = Int(retention.components.seconds)
        try await database.query("""
            DELETE FROM outbox WHERE stream = \(stream) AND seq IS NOT NULL AND created_at < now() - make_interval(secs => \(seconds))
            """)
    }
}
