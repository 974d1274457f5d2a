import Logging
import Persistence
import PostgresNIO
import Synchronization

/// The events one transaction writes to one stream, inserted numbered by its last statement.
///
/// The statement moves the stream's head (`outbox_streams.last_seq`, row-locked) by the number
/// of events and inserts them with the numbers it took, just before `COMMIT`
/// (``CommitHooks/finalStatement(key:_:)``). The lock is the transaction's last and is held
/// until its commit, so numbers follow commit order: a row seen committed means every lower
/// number of the stream is committed too, which lets ``OutboxRelay`` send the rows by reading
/// them in order, without a transaction of its own or a second write of each row. A rollback
/// takes its numbers back with it, so the stream has no gaps. Issue 44.
final class EventsAtCommit: FinalStatement {
    private struct Rows {
        var ids: [String] = []
        var types: [String] = []
        var bodies: [String] = []
    }

    let stream: String
    let relay: OutboxRelay?
    private let rows = Mutex(Rows())

    init(stream: String, relay: OutboxRelay?) {
        self.stream = stream
        self.relay = relay
    }

    /// Adds events, in order.
    func add(ids: [String], types: [String], bodies: [String]) {
        rows.withLock { r in
            r.ids += ids
            r.types += types
            r.bodies += bodies
        }
    }

    func run(on connection: PostgresConnection, hooks: CommitHooks, logger: Logger) async throws {
        let r = rows.withLock { $0 }
        let n = Int64(r.ids.count)
        guard n > 0 else { return }
        let stream = self.stream
        let first = try await connection.prepared("""
            WITH head AS (
                INSERT INTO outbox_streams AS s (stream, last_seq) VALUES (\(stream), \(n))
                ON CONFLICT (stream) DO UPDATE SET last_seq = s.last_seq + excluded.last_seq
                RETURNING last_seq
            ), inserted AS (
                INSERT INTO outbox (event_id, stream, type, envelope, seq, published_at)
                SELECT e.id, \(stream), e.type, e.body, head.last_seq - \(n) + e.n, now()
                FROM head, unnest(\(r.ids)::text[], \(r.types)::text[], \(r.bodies)::text[]) WITH ORDINALITY AS e(id, type, body, n)
            )
            -- The lock is held until COMMIT: a process that stops before sending it (paused,
            -- cut off) must not hold every writer of the stream for long.
            -- At most 5 s, whatever the server, role or transaction set (printed as `5s`, `1h`,
            -- `0`: each reads as an interval).
            SELECT last_seq - \(n) + 1 FROM head, (SELECT set_config('idle_in_transaction_session_timeout',
                CASE WHEN current_setting('idle_in_transaction_session_timeout')::interval = '0'
                       OR current_setting('idle_in_transaction_session_timeout')::interval > '5s' THEN '5s'
                     ELSE current_setting('idle_in_transaction_session_timeout') END, true)) AS timeout
            """, logger: logger).first(Int64.self)
        // Told before the commit, so a relay whose first read sees these rows committed knows
        // they are this process's (a rollback only makes it start lower and send a few rows twice).
        if let relay, let first { relay.committedOwn(from: first) }
    }
}
