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
///
/// With `numbersAtCommit` (the default), rows arrive numbered by the transactions that wrote
/// them (``EventsAtCommit``): numbers follow commit order, so the relay reads the rows after
/// the last one it read, in order, with one statement and no transaction, and sends them (the
/// envelopes this process wrote from ``RelayBodyCache``, the others read back). A crash
/// between commit and send is caught up by replay, as above. Rows still written without a
/// number (a REPEATABLE READ transaction, a writer outside a transaction, an older build during
/// a rolling upgrade) are numbered first, under the same lock, and sent by the same read.
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
    private let cleanupInterval: Duration
    private let lastHead = Atomic<Int64>(0)
    /// Envelopes committed by this process's ``OutboxWriter``, so numbering reads no envelope back.
    let bodies: RelayBodyCache
    /// Whether rows come numbered by their transactions (see the type's overview).
    let numbersAtCommit: Bool
    /// Where the relay has read rows numbered at commit up to.
    private let reading = Mutex(ReadPosition())
    /// What went out under the last numbers (where a stream that went back is read on from).
    private let sentNumbers = Mutex(SentNumbers())

    struct ReadPosition {
        /// The last number read (nil before the first batch).
        var seen: Int64?
        /// The lowest number this process committed before the first batch.
        var ownFloor: Int64?
        /// Whether unnumbered rows may be waiting (checked with every read).
        var unnumbered = true
    }

    public init(database: Database, stream: String, sink: any EventSink, telemetry: Telemetry,
                pollInterval: Duration = .milliseconds(250), heartbeatInterval: Duration = .seconds(1),
                batchSize: Int = 1000, retention: Duration = .seconds(7 * 86_400), cleanupInterval: Duration = .seconds(3600),
                numbersAtCommit: Bool = true) {
        self.database = database
        self.numbersAtCommit = numbersAtCommit
        self.stream = stream
        self.sink = sink
        self.telemetry = telemetry
        self.pollInterval = pollInterval
        self.heartbeatInterval = heartbeatInterval
        self.batchSize = batchSize
        self.retention = retention
        self.cleanupInterval = cleanupInterval
        self.bodies = RelayBodyCache(capacity: max(4 * batchSize, 10_000))
    }

    /// Asks the relay to look for new rows now.
    public func wake() { signal.signal() }

    /// The highest sequence number this relay has seen assigned.
    public var head: Int64 { lastHead.load(ordering: .relaxed) }

    public func run() async throws {
        // The backlog is measured on its own, so a relay loop that stopped moving still shows
        // a backlog that grows.
        let backlog = Task { await self.reportBacklog() }
        defer { backlog.cancel() }
        await cancelWhenGracefulShutdown {
            let clock = ContinuousClock()
            var nextHeartbeat = clock.now
            // The first cleanup a minute after start (or sooner, with a shorter interval), then
            // every `cleanupInterval` (an hour unless `CHRONIR_OUTBOX_CLEANUP_INTERVAL` says).
            var nextCleanup = clock.now + min(.seconds(60), self.cleanupInterval)
            while !Task.isCancelled {
                do {
                    var more = true
                    while more && !Task.isCancelled {
                        // A statement written on a connection that closed in between is never
                        // answered (see `Database.ensureOpen`); a relay stuck on one would publish
                        // nothing again. Given up after the deadline, a batch that still commits
                        // later is a gap its consumers fill by replay.
                        more = try await withDeadline(.seconds(30)) { try await self.relayBatch() } >= self.batchSize
                    }
                    if clock.now >= nextHeartbeat {
                        try await self.heartbeat()
                        nextHeartbeat = clock.now + self.heartbeatInterval
                    }
                    if clock.now >= nextCleanup {
                        try await self.cleanup()
                        nextCleanup = clock.now + self.cleanupInterval
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

    /// Every 15 s: `chronir_outbox_backlog{stream}` (rows committed and not yet numbered and
    /// sent, or numbered at commit and not yet read) and `chronir_outbox_oldest_unrelayed_seconds{stream}` (how long the oldest of them
    /// has waited; 0 without any), the alert on a relay that stopped.
    private func reportBacklog() async {
        let count = telemetry.gauge("chronir_outbox_backlog", [("stream", stream)])
        let age = telemetry.gauge("chronir_outbox_oldest_unrelayed_seconds", [("stream", stream)])
        let stream = self.stream, database = self.database
        let started = ContinuousClock.now
        while !Task.isCancelled {
            do {
                try await withDeadline(.seconds(10)) {
                    // Rows numbered at commit wait from the last one read; a relay that has not
                    // read once in its first minute has every row waiting.
                    let unread: Int64 = started.duration(to: .now) > .seconds(60) ? 0 : Int64.max
                    let seen = self.numbersAtCommit ? (self.reading.withLock { $0.seen } ?? unread) : Int64.max
                    let rows = try await database.query("""
                        SELECT count(*)::int8, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 FROM (
                            SELECT created_at FROM outbox WHERE stream = \(stream) AND seq IS NULL
                            UNION ALL SELECT created_at FROM outbox WHERE stream = \(stream) AND seq > \(seen)) waiting
                        """)
                    for try await row in rows {
                        let (n, seconds) = try row.decode((Int64, Double).self)
                        count.record(Double(n))
                        age.record(seconds)
                    }
                }
            } catch {
                // The database is unreachable: chronir_database_available says so.
            }
            try? await Task.sleep(for: .seconds(15))
        }
    }

    /// A process's transaction is committing rows numbered from `first` (``EventsAtCommit``):
    /// before the relay's first batch, it starts reading from there.
    func committedOwn(from first: Int64) {
        reading.withLock { r in
            if r.seen == nil { r.ownFloor = min(r.ownFloor ?? first, first) }
        }
    }

    /// Sends one batch; returns how many rows it read or numbered (a full batch or more means
    /// more may wait).
    @discardableResult
    public func relayBatch() async throws -> Int {
        guard numbersAtCommit else { return try await numberAndSend() }
        // Unnumbered rows first, so the read below sends them in order with the rest.
        let numberedFirst = reading.withLock { $0.unnumbered }
        var count = numberedFirst ? try await numberAndSend(sending: false) : 0
        count += try await sendNumbered()
        // Unnumbered rows this read noticed are numbered in the next batch, at once, not a poll later.
        if !numberedFirst && reading.withLock({ $0.unnumbered }) { return max(count, batchSize) }
        return count
    }

    /// Reads the rows numbered after the last one read, in order, and sends them: the envelopes
    /// this process wrote from memory, the others (a replica's rows, rows the bounded memory
    /// let go) read back from the table. Every replica's relay sends every row, so the stream
    /// reaches consumers in order whichever replica committed which row; the copies from the
    /// other replicas arrive as duplicates, which a consumer drops before decoding them. Notes
    /// whether unnumbered rows wait. Returns how many rows it read.
    private func sendNumbered() async throws -> Int {
        let stream = self.stream
        let after: Int64
        if let seen = reading.withLock({ $0.seen }) {
            after = seen
        } else {
            // The first batch: from the head, or from this process's first commit if it is lower
            // (read after the head, so a commit the head includes has told its number).
            let head = try await database.prepared("SELECT last_seq FROM outbox_streams WHERE stream = \(stream)")
                .first(Int64.self) ?? 0
            let floor = reading.withLock { $0.ownFloor }
            after = min(head, floor.map { $0 - 1 } ?? head)
        }
        let rows = try await database.prepared("""
            (SELECT seq, event_id FROM outbox WHERE stream = \(stream) AND seq > \(after) ORDER BY seq LIMIT \(batchSize))
            UNION ALL
            SELECT NULL, NULL WHERE EXISTS (SELECT 1 FROM outbox WHERE stream = \(stream) AND seq IS NULL)
            UNION ALL
            SELECT -1, event_id FROM outbox WHERE stream = \(stream) AND seq = \(after)
            """)
        var numbered: [(seq: Int64, id: String)] = []
        var unnumbered = false
        var idAtAfter: String?
        for try await row in rows {
            let (seq, id) = try row.decode((Int64?, String?).self)
            if seq == -1 { idAtAfter = id } else if let seq, let id { numbered.append((seq, id)) } else { unnumbered = true }
        }
        // The number read last holds another event than the one sent under it: the stream went
        // back and the producer has written past the old position since (see ``heartbeat()``).
        if let idAtAfter, let sent = sentNumbers.withLock({ $0.id(at: after) }), sent != idAtAfter {
            try await readOnAfterRewind(seen: after)
            return batchSize   // read again at once, from where it now stands
        }
        numbered.sort { $0.seq < $1.seq }
        let events = try await envelopes(of: numbered) { try await database.prepared(Self.envelopesQuery(stream, $0)) }
        let last = numbered.last?.seq ?? after
        reading.withLock { r in
            r.seen = max(r.seen ?? last, last)
            r.unnumbered = unnumbered
        }
        if !events.isEmpty {
            sink.publish(stream: stream, events: events)
            sentNumbers.withLock { s in for n in numbered { s.sent(n.seq, n.id) } }
            telemetry.counter("chronir_outbox_published_total", [("stream", stream)]).increment(by: events.count)
        }
        lastHead.store(max(lastHead.load(ordering: .relaxed), last), ordering: .relaxed)
        return numbered.count
    }

    /// Numbers the oldest unnumbered rows and (unless `sending` is false: the rows are then
    /// sent by the next in-order read) sends them; returns how many it took.
    private func numberAndSend(sending: Bool = true) async throws -> Int {
        let logger = telemetry.logger
        let stream = self.stream
        let limit = batchSize
        let events: [(seq: Int64, envelope: Data)] = try await database.transaction { connection in
            // Four round trips however many rows: the stream's lock, then one statement that
            // numbers the oldest unnumbered rows, moves the head and returns their event ids. The
            // lock is taken in a statement of its own so the numbering statement's snapshot, taken
            // after it, sees every row another relay numbered before letting go of the lock. The
            // envelopes come from memory (``RelayBodyCache``); a fifth round trip reads those that
            // are not there (another process wrote them, a restart, the bounded cache let go).
            let last = try await RowLock.value("SELECT last_seq FROM outbox_streams WHERE stream = \(stream) FOR UPDATE",
                                               creating: "INSERT INTO outbox_streams (stream) VALUES (\(stream)) ON CONFLICT DO NOTHING",
                                               on: connection, logger: logger)
            let rows = try await connection.prepared("""
                WITH pending AS (
                    SELECT id, row_number() OVER (ORDER BY id) AS n
                    FROM (SELECT id FROM outbox WHERE stream = \(stream) AND seq IS NULL ORDER BY id LIMIT \(limit)) oldest
                ), numbered AS (
                    UPDATE outbox SET seq = \(last) + pending.n, published_at = now()
                    FROM pending WHERE outbox.id = pending.id
                    RETURNING outbox.seq, outbox.event_id
                ), head AS (
                    UPDATE outbox_streams SET last_seq = \(last) + (SELECT count(*) FROM pending)
                    WHERE stream = \(stream) AND EXISTS (SELECT 1 FROM pending)
                )
                SELECT seq, event_id FROM numbered ORDER BY seq
                """, logger: logger)
            var numbered: [(seq: Int64, id: String)] = []
            for try await row in rows {
                let (seq, id) = try row.decode((Int64, String).self)
                numbered.append((seq, id))
            }
            guard sending else { return numbered.map { (seq: $0.seq, envelope: Data()) } }
            return try await self.envelopes(of: numbered) { try await connection.prepared(Self.envelopesQuery(stream, $0), logger: logger) }
        }
        guard sending, let last = events.last else { return events.count }
        sink.publish(stream: stream, events: events)
        lastHead.store(last.seq, ordering: .relaxed)
        telemetry.counter("chronir_outbox_published_total", [("stream", stream)]).increment(by: events.count)
        return events.count
    }

    /// The envelopes of `numbered` rows, in order: those this process remembers from memory
    /// (``RelayBodyCache``), the others read back by `readBack` (given their numbers; another
    /// process wrote them, a restart, the bounded memory let go).
    private func envelopes(of numbered: [(seq: Int64, id: String)],
                           readBack: ([Int64]) async throws -> PreparedRows) async throws -> [(seq: Int64, envelope: Data)] {
        let remembered = bodies.take(numbered.map(\.id))
        let missing = zip(numbered, remembered).compactMap { $1 == nil ? $0.seq : nil }
        var read: [Int64: Data] = [:]
        if !missing.isEmpty {
            for try await row in try await readBack(missing) {
                let (seq, body) = try row.decode((Int64, String).self)
                read[seq] = Data(body.utf8)
            }
        }
        return try zip(numbered, remembered).map { n, body in
            guard let envelope = body ?? read[n.seq] else { throw OutboxRowVanished(stream: stream, seq: n.seq) }
            return (seq: n.seq, envelope: envelope)
        }
    }

    /// The stored envelopes of a stream's rows `seqs`.
    private static func envelopesQuery(_ stream: String, _ seqs: [Int64]) -> PostgresQuery {
        "SELECT seq, envelope FROM outbox WHERE stream = \(stream) AND seq = ANY(\(seqs)::bigint[])"
    }

    /// Announces the head: the stream's, or with rows numbered at commit the last row read and
    /// sent. Those numbers move at commit, before the
    /// relay has read and sent the rows: a head announced from the table would often run a few
    /// milliseconds ahead of what went out, and each such heartbeat sends consumers to replay.
    ///
    /// The table's head, and the event now under the last number read, are read every time all
    /// the same: when the head is behind what this relay read, or that number holds another
    /// event than the one sent under it (the producer wrote more since than was lost), the
    /// stream went back under a relay that kept running (a failover to a standby that had not
    /// received the last commits, a restored database), and the rows numbered again since
    /// are new events that reading on after its old position would never send. The relay finds
    /// the first of them (the first row whose event is not the one it sent under that number,
    /// ``SentNumbers``), reads on from just before it, and announces the table's head, so
    /// consumers whose checkpoints are past it stop and alert (`stream-rewound`) instead of
    /// reporting lag 0. Logged as an error with the number to set their checkpoints back to
    /// (`read on after`: nothing of the new events is lost); `chronir_outbox_rewinds_total{stream}`.
    func heartbeat() async throws {
        let seen = numbersAtCommit ? reading.withLock({ $0.seen }) : nil
        var head: Int64 = 0
        var idAtSeen: String?
        for try await row in try await database.prepared("""
            SELECT s.last_seq, (SELECT event_id FROM outbox WHERE stream = \(stream) AND seq = \(seen ?? -1))
            FROM outbox_streams s WHERE s.stream = \(stream)
            """) {
            (head, idAtSeen) = try row.decode((Int64, String?).self)
        }
        if let seen {
            let sentAtSeen = sentNumbers.withLock { $0.id(at: seen) }
            // A row gone (the retention sweep of an idle stream) is not a rewind by itself.
            let replaced = idAtSeen != nil && sentAtSeen != nil && idAtSeen != sentAtSeen
            guard head < seen || replaced else {
                sink.heartbeat(stream: stream, head: seen)
                return
            }
            try await readOnAfterRewind(seen: seen)
        }
        lastHead.store(head, ordering: .relaxed)
        sink.heartbeat(stream: stream, head: head)
    }

    /// The stream went back under this relay, which had read up to `seen`: reads on from just
    /// before the first row whose event is not the one sent under its number (``SentNumbers``),
    /// and says so (an error log naming the number consumers' checkpoints go back to, and
    /// `chronir_outbox_rewinds_total{stream}`).
    private func readOnAfterRewind(seen: Int64) async throws {
        let lowest = sentNumbers.withLock { $0.lowest } ?? 0
        var head: Int64 = 0
        var rows: [(seq: Int64, id: String)] = []
        for try await row in try await database.prepared("""
            SELECT seq, event_id FROM outbox WHERE stream = \(stream) AND seq >= \(lowest) AND seq <= \(seen) AND seq IS NOT NULL
            UNION ALL SELECT -1, last_seq::text FROM outbox_streams WHERE stream = \(stream)
            ORDER BY 1
            """) {
            let (seq, id) = try row.decode((Int64, String).self)
            if seq == -1 { head = Int64(id) ?? 0 } else { rows.append((seq, id)) }
        }
        let after = sentNumbers.withLock { $0.readOnAfter(head: min(head, seen), rows: rows) }
        if head < lowest {
            telemetry.logger.error("the stream went back further than the numbers this relay remembers: events written since the rewind at or below the head may not be sent; find the first by the failover's time (docs/operations.md)",
                                   metadata: ["stream": "\(stream)", "head": "\(head)", "lowestRemembered": "\(lowest)"])
        }
        reading.withLock { r in r.seen = after }
        lastHead.store(after, ordering: .relaxed)
        telemetry.counter("chronir_outbox_rewinds_total", [("stream", stream)]).increment()
        telemetry.logger.error("the stream went back under its relay: the events numbered again from \(after + 1) are sent; a consumer whose checkpoint is past \(after) stops until an operator sets it to \(after) (docs/operations.md)",
                               metadata: ["stream": "\(stream)", "read": "\(seen)", "head": "\(head)", "readOnAfter": "\(after)"])
    }

    private func cleanup() async throws {
        let seconds = Int(retention.components.seconds)
        // The numbered rows before the first one created within the retention, in id
        // (insertion) order: each was created before the retention began, since the first
        // later one is after them. (A row of a transaction that began earlier but inserted
        // later waits for a later sweep.) Both found through the primary key.
        try await database.query("""
            DELETE FROM outbox WHERE stream = \(stream) AND seq IS NOT NULL AND id < coalesce(
                (SELECT min(id) FROM outbox WHERE stream = \(stream) AND created_at >= now() - make_interval(secs => \(seconds))),
                9223372036854775807)
            """)
        // Dead letters hold events (and the personal data in them) no longer than the outbox does.
        try await database.query("DELETE FROM consumer_dead_letters WHERE recorded_at < now() - make_interval(secs => \(seconds))")
    }
}

/// A row the relay had just numbered or read was not there when it read its envelope (nothing
/// deletes unsent rows short of the retention: a bug, or a relay that fell behind by the whole
/// retention; reported rather than skipped).
struct OutboxRowVanished: Error, CustomStringConvertible {
    var stream: String
    var seq: Int64
    var description: String { "outbox row \(seq) of stream \(stream) vanished before its envelope was read" }
}
