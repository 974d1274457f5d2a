import Contracts
import Foundation
import Logging
import Messaging
import Persistence
import PostgresNIO
import Synchronization

/// SQL of the notifications schema for the consumers and the inbox API: inbox rows, deliveries,
/// devices, withdrawals and account deletion. Statements on a consumer's connection log to the
/// event's logger (`logger:`), as they did in the handlers; the API's queries run on the pool.
struct NotificationStore: Sendable {
    let database: Database

    // MARK: Inbox rows

    /// The columns ``decodeInbox(_:)`` reads, in its order.
    static let inboxColumns = "id, user_id, type, title, body, data::text, event_id, created_at, acked_at"

    /// Inbox rows selected or returned with ``inboxColumns`` (a `data` that is not a string map
    /// reads as empty).
    static func decodeInbox(_ rows: PostgresRowSequence) async throws -> [InboxNotification] {
        var out: [InboxNotification] = []
        for try await (id, user, type, title, body, data, event, created, acked)
            in rows.decode((Int64, String, String, String, String, String, String, Date, Date?).self) {
            let map = (try? JSONCoding.decoder().decode([String: String].self, from: Data(data.utf8))) ?? [:]
            out.append(InboxNotification(id: id, userId: user, type: type, title: title, body: body, data: map, eventId: event,
                                         createdAt: created, ackedAt: acked))
        }
        return out
    }

    /// Takes, until the transaction ends, the inbox locks of `users`. A user's inbox ids are
    /// drawn at insert but become visible at commit, and the live stream and every cursor pass
    /// an id only once: four consumers inserting for one user at once could commit a smaller id
    /// after a larger one was sent, and the smaller would never reach the client. Held by the
    /// inserting transaction, the lock makes a user's ids commit, and so reach the stream
    /// (numbered at commit), in id order.
    ///
    /// The locks are ``inboxLockBuckets`` buckets of users (`hashtextextended('inbox:' || user)`),
    /// so a transaction holds at most that many however large its batch (one lock per user
    /// exhausted the lock table, 53200, on a 500-event batch). A transaction calls this once per
    /// event or run of events, so it waits only in one order: buckets above the highest it holds
    /// are waited for in increasing order; one at or below it (met by a later event) is only
    /// tried, and when another transaction holds it the attempt is rolled back and run again
    /// (``TransactionConflict``) instead of waiting, which with two calls each in two orders
    /// deadlocked (40P01). The attempt run again takes, at its first call, every lock the
    /// stepped-back attempt asked for, all in order. Users in different buckets do not wait for
    /// each other.
    func lockInboxes(of users: [String], on c: PostgresConnection, logger: Logger) async throws {
        let hooks = CommitHooks.current
        let held = hooks?.value(key: "inbox-locks") { InboxLocksHeld() }
        let highest = held?.highest ?? -1
        var wanted = Set(users)
        if highest < 0, let stepped = hooks?.previousValue(key: "inbox-locks", as: InboxLocksHeld.self) { wanted.formUnion(stepped.users) }
        held?.want(wanted)
        let distinct = wanted.sorted()
        guard !distinct.isEmpty else { return }
        let rows = try await c.prepared("""
            WITH b AS (
                SELECT DISTINCT (hashtextextended('inbox:' || u, 0) & \(Self.inboxLockBuckets - 1))::int AS k
                FROM unnest(\(distinct)::text[]) AS x(u)
            ), tried AS (
                SELECT coalesce(bool_and(pg_try_advisory_xact_lock(\(Self.inboxLockClass), k)), true) AS ok FROM b WHERE k <= \(highest)
            ), waited AS (
                SELECT count(pg_advisory_xact_lock(\(Self.inboxLockClass), k)) AS n FROM (SELECT k FROM b WHERE k > \(highest) ORDER BY k) s
            )
            SELECT (SELECT ok FROM tried), (SELECT max(k) FROM b), (SELECT n FROM waited)
            """, logger: logger)
        var ok = true
        for try await row in rows {
            let (tried, top, _) = try row.decode((Bool, Int32, Int64).self)
            ok = tried
            held?.raise(to: top)
        }
        if !ok { throw TransactionConflict("an inbox lock below one this transaction holds is busy") }
    }

    /// Raises the inbox's id sequence to the database's clock in microseconds since the epoch
    /// when it is below, and returns whether it did. Run at start and every second
    /// (``NotificationsService``), so every id handed out is below the clock's microseconds:
    /// the inbox of a database that went back (restored from a backup, a failover to a standby
    /// that lagged) numbers its next rows above every id a client may hold as its cursor
    /// (`since`, `Last-Event-ID`), instead of reusing ids the client has passed — rows the
    /// client would never be sent. Fewer than a million ids a second keep the ids below the
    /// clock; 1.8e15 today, under JavaScript's 2^53 until the 23rd century. One bump at a time
    /// (an advisory lock), so a bump never takes the sequence back under a later one.
    @discardableResult
    func raiseIdFloor() async throws -> Bool {
        try await database.transaction { c in
            try await c.query("SELECT pg_advisory_xact_lock(\(Self.inboxLockClass), -1)", logger: self.database.logger).drain()
            let raised = try await c.query("""
                SELECT setval('inbox_id_seq', f, false)
                FROM (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS f) x, inbox_id_seq s
                WHERE s.last_value < x.f
                """, logger: self.database.logger).drain()
            return raised > 0
        }
    }

    /// How many inbox locks there are (a power of two): the most one transaction holds.
    static let inboxLockBuckets: Int32 = 1024
    /// The first key of the two-key advisory locks of inboxes (apart from every one-key lock).
    static let inboxLockClass: Int32 = 0x1B0C

    /// Inserts a run of inbox rows with one statement, column by column (row `i` of every
    /// array is one row; `datas` are JSON objects). A row is created at `greatest(now(), at)`;
    /// a row whose event and user already have one is skipped; the users' inbox locks are taken
    /// first (``lockInboxes(of:on:logger:)``). Returns the inserted rows, in the order the
    /// database returned them.
    func insertInboxBatch(users: [String], events: [String], types: [String], titles: [String], bodies: [String], datas: [String],
                          ats: [Date], on c: PostgresConnection, logger: Logger) async throws
        -> [(id: Int64, user: String, event: String, created: Date)] {
        try await lockInboxes(of: users, on: c, logger: logger)
        let rows = try await c.prepared("""
            INSERT INTO inbox (user_id, event_id, type, title, body, data, created_at)
            SELECT u, e, t, ti, b, d::jsonb, greatest(now(), at) FROM unnest(\(users)::text[], \(events)::text[], \(types)::text[], \(titles)::text[],
                \(bodies)::text[], \(datas)::text[], \(ats)::timestamptz[]) WITH ORDINALITY AS x(u, e, t, ti, b, d, at, n)
            ORDER BY n
            ON CONFLICT (event_id, user_id) DO NOTHING
            RETURNING id, user_id, event_id, created_at
            """, logger: logger)
        var out: [(id: Int64, user: String, event: String, created: Date)] = []
        for try await (id, user, event, created) in rows.decode((Int64, String, String, Date).self) {
            out.append((id, user, event, created))
        }
        return out
    }

    /// Inserts one user's inbox row of an event (`data`: a JSON object), created now, under the
    /// user's inbox lock (``lockInboxes(of:on:logger:)``); nil when the event already has one
    /// for the user.
    func insertInbox(user: String, event eventId: String, type: String, title: String, body: String, data: String,
                     on c: PostgresConnection, logger: Logger) async throws -> (id: Int64, created: Date)? {
        try await lockInboxes(of: [user], on: c, logger: logger)
        let rows = try await c.query("""
            INSERT INTO inbox (user_id, event_id, type, title, body, data)
            VALUES (\(user), \(eventId), \(type), \(title), \(body), \(data)::jsonb)
            ON CONFLICT (event_id, user_id) DO NOTHING
            RETURNING id, created_at
            """, logger: logger)
        guard let (id, created) = try await rows.decode((Int64, Date).self).first(where: { _ in true }) else { return nil }
        return (id, created)
    }

    /// Deletes the inbox rows of `eventId` still waiting for their instant and drops their
    /// pending deliveries, in one statement. Returns the deleted rows, by user then id.
    /// "Still waiting" is read at the statement (`clock_timestamp()`), not at the transaction's
    /// start (`now()`): a row that came due while the batch ran may have been let out already.
    func withdrawWaiting(event eventId: String, on c: PostgresConnection, logger: Logger) async throws -> [(id: Int64, user: String)] {
        let rows = try await c.query("""
            WITH gone AS (DELETE FROM inbox WHERE event_id = \(eventId) AND created_at > clock_timestamp() RETURNING id, user_id),
            dropped AS (
                UPDATE deliveries d SET state = 'dropped', last_error = 'fire withdrawn', finished_at = now()
                FROM gone WHERE d.inbox_id = gone.id AND d.state = 'pending'
            )
            SELECT id, user_id FROM gone ORDER BY user_id, id
            """, logger: logger)
        var out: [(id: Int64, user: String)] = []
        for try await (id, user) in rows.decode((Int64, String).self) { out.append((id, user)) }
        return out
    }

    // MARK: Deliveries

    /// Queues, with one statement, a delivery of each inbox row (row `i` of every array: inbox
    /// id, user, event, content JSON, first attempt) to every device of its user that has a
    /// token or a webhook; a device that already has one for the event is skipped. Returns the
    /// number queued.
    func queueDeliveryBatch(inboxIds ids: [Int64], users: [String], events: [String], contents: [String], ats: [Date],
                            on c: PostgresConnection, logger: Logger) async throws -> Int {
        try await c.prepared("""
            INSERT INTO deliveries (event_id, inbox_id, user_id, device_id, provider, token, webhook_url, content, next_attempt_at)
            SELECT x.e, x.i, d.user_id, d.device_id, d.provider, d.token, d.webhook_url, x.c::jsonb, x.at
            FROM unnest(\(ids)::bigint[], \(users)::text[], \(events)::text[], \(contents)::text[], \(ats)::timestamptz[]) AS x(i, u, e, c, at)
            JOIN devices d ON d.user_id = x.u AND (d.token IS NOT NULL OR d.webhook_url IS NOT NULL)
            ON CONFLICT (event_id, device_id) DO NOTHING
            RETURNING 1
            """, logger: logger).all(Int32.self).count
    }

    /// Queues a delivery of inbox row `inboxId` (of `eventId`, `content` JSON) to every device
    /// of `user` that has a token or a webhook; a device that already has one for the event is
    /// skipped. Returns the number queued.
    func queueDeliveries(event eventId: String, inbox inboxId: Int64, user: String, content: String,
                         on c: PostgresConnection, logger: Logger) async throws -> Int {
        try await c.query("""
            INSERT INTO deliveries (event_id, inbox_id, user_id, device_id, provider, token, webhook_url, content)
            SELECT \(eventId), \(inboxId), user_id, device_id, provider, token, webhook_url, \(content)::jsonb FROM devices
            WHERE user_id = \(user) AND (token IS NOT NULL OR webhook_url IS NOT NULL)
            ON CONFLICT (event_id, device_id) DO NOTHING
            RETURNING id
            """, logger: logger).all(Int64.self).count
    }

    /// Drops the pending deliveries to one device of `user` (the device was removed).
    func dropPendingDeliveries(user: String, device: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("""
            UPDATE deliveries SET state = 'dropped', last_error = 'device removed', finished_at = now()
            WHERE user_id = \(user) AND device_id = \(device) AND state = 'pending'
            """, logger: logger)
    }

    // MARK: Devices

    /// Inserts or replaces a device of `user`, pushed to through `provider`.
    func upsertDevice(user: String, _ d: Device, provider: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("""
            INSERT INTO devices (user_id, device_id, platform, provider, token, webhook_url, updated_at)
            VALUES (\(user), \(d.deviceId), \(d.platform), \(provider), \(d.pushToken), \(d.webhookUrl), \(d.updatedAt))
            ON CONFLICT (user_id, device_id) DO UPDATE SET platform = excluded.platform, provider = excluded.provider,
                token = excluded.token, webhook_url = excluded.webhook_url, updated_at = excluded.updated_at
            """, logger: logger)
    }

    /// Deletes one device of `user`.
    func deleteDevice(user: String, device: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("DELETE FROM devices WHERE user_id = \(user) AND device_id = \(device)", logger: logger)
    }

    // MARK: Account deletion

    /// Deletes every device of `user`.
    func deleteDevices(of user: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("DELETE FROM devices WHERE user_id = \(user)", logger: logger)
    }

    /// Deletes every inbox row of `user`.
    func deleteInbox(of user: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("DELETE FROM inbox WHERE user_id = \(user)", logger: logger)
    }

    /// Deletes the attempts of every delivery to `user`.
    func deleteAttempts(of user: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE user_id = \(user))", logger: logger)
    }

    /// Deletes every delivery to `user`.
    func deleteDeliveries(of user: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("DELETE FROM deliveries WHERE user_id = \(user)", logger: logger)
    }

    /// Removes `completedBy` from the data of other users' inbox rows that name `user`.
    func eraseCompletedByInInbox(_ user: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("UPDATE inbox SET data = data - 'completedBy' WHERE data->>'completedBy' = \(user)", logger: logger)
    }

    /// Removes `completedBy` from the content data of deliveries that name `user`.
    func eraseCompletedByInDeliveries(_ user: String, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("""
            UPDATE deliveries SET content = jsonb_set(content, '{data}', (content->'data') - 'completedBy')
            WHERE content->'data'->>'completedBy' = \(user)
            """, logger: logger)
    }

    // MARK: The inbox API

    /// The last sequence number of the `notifications` outbox stream; nil before its first event.
    /// The stream's head and the database's clock (`clock_timestamp()`, milliseconds since
    /// the epoch), read by one statement.
    func streamHeadAndClock() async throws -> (Int64?, Int64?) {
        let rows = try await database.query("""
            SELECT (SELECT last_seq FROM outbox_streams WHERE stream = 'notifications'),
                   (extract(epoch FROM clock_timestamp()) * 1000)::bigint
            """)
        for try await row in rows { return try row.decode((Int64?, Int64?).self) }
        return (nil, nil)
    }

    /// The types of silent entries: sync signals for devices and live streams, left out of the
    /// inbox a person reads and not acknowledged there.
    static let silentTypes = ["alarm_changed", "plan_changed"]

    /// Up to `rows` inbox rows of `user` after the cursor `since`, by id, that have come due;
    /// silent entries (`alarm_changed`, `plan_changed`: sync signals rather than something to
    /// read) only when `silent`. The page ends before the first row still waiting for its
    /// instant (a fire announced ahead): what follows it waits too, so a cursor never passes an
    /// entry the client has not been able to see. Whether a row waits is the database's clock's
    /// call (`clock_timestamp()`, which the scheduler set the instant by), never this host's: a
    /// host clock ahead let fires out early (the 20-minute soak, issue 75).
    func inbox(of user: String, after since: Int64, rows: Int, silent: Bool = false) async throws -> [InboxNotification] {
        try await Self.decodeInbox(database.query("""
            SELECT \(unescaped: Self.inboxColumns) FROM (
                SELECT *, bool_or(created_at > clock_timestamp()) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) AS held FROM (
                    SELECT * FROM inbox
                    WHERE user_id = \(user) AND id > \(since) AND (\(silent) OR type <> ALL(\(Self.silentTypes))) ORDER BY id LIMIT \(rows)
                ) page
            ) cut WHERE NOT held ORDER BY id
            """))
    }

    /// Up to `rows` inbox rows after id `after`, by id, of every user with a row still waiting
    /// for its instant: the waiting rows and every later row of the same user. A live stream
    /// lets a user's rows out in id order, so the rows behind a waiting one wait with it; a
    /// gateway that starts (a restart, a new replica) loads them all, or a resumed client,
    /// whose inbox read stops at the waiting row, would never be sent the rows behind it.
    func waiting(after: Int64, rows: Int) async throws -> [InboxNotification] {
        try await Self.decodeInbox(database.query("""
            SELECT \(unescaped: Self.inboxColumns) FROM inbox WHERE id > \(after) AND id IN (
                SELECT i.id FROM (SELECT user_id, min(id) AS first FROM inbox WHERE created_at > now() GROUP BY user_id) w
                JOIN inbox i ON i.user_id = w.user_id AND i.id >= w.first)
            ORDER BY id LIMIT \(rows)
            """))
    }

    /// Acknowledges inbox row `id` of `user` (a second acknowledgement keeps the first's time);
    /// nil when `user` has no such row.
    func ack(_ id: Int64, user: String) async throws -> InboxNotification? {
        // A silent entry is a sync signal, not in the inbox a person reads: nothing to acknowledge.
        let rows = try await Self.decodeInbox(database.query("""
            UPDATE inbox SET acked_at = coalesce(acked_at, now())
            WHERE id = \(id) AND user_id = \(user) AND type <> ALL(\(Self.silentTypes)) RETURNING \(unescaped: Self.inboxColumns)
            """))
        return rows.first
    }

    /// Up to `limit` delivery attempts after id `after`, by id, with their deliveries' event, user and device.
    func attempts(after: Int64, limit: Int) async throws -> [NotificationsMethods.Attempts.Attempt] {
        let rows = try await database.query("""
            SELECT a.id, a.delivery_id, d.event_id, d.user_id, d.device_id, a.provider, a.attempt, a.status, a.outcome, a.latency_ms, a.error, a.at
            FROM attempts a JOIN deliveries d ON d.id = a.delivery_id
            WHERE a.id > \(after) ORDER BY a.id LIMIT \(limit)
            """)
        var out: [NotificationsMethods.Attempts.Attempt] = []
        for try await (id, delivery, event, user, device, provider, attempt, status, outcome, latency, error, at)
            in rows.decode((Int64, Int64, String, String, String, String, Int32, Int32, String, Double, String?, Date).self) {
            out.append(.init(id: id, deliveryId: delivery, eventId: event, userId: user, deviceId: device, provider: provider,
                             attempt: Int(attempt), status: Int(status), outcome: outcome, latencyMs: latency, error: error, at: at))
        }
        return out
    }
}

/// The highest inbox lock bucket a transaction holds (``NotificationStore/lockInboxes(of:on:logger:)``).
final class InboxLocksHeld: Sendable {
    private let top = Mutex<Int32>(-1)
    private let asked = Mutex<Set<String>>([])

    var highest: Int32 { top.withLock { $0 } }
    /// Every user whose inbox lock the transaction asked for.
    var users: Set<String> { asked.withLock { $0 } }

    func raise(to bucket: Int32) {
        top.withLock { $0 = max($0, bucket) }
    }

    func want(_ users: Set<String>) {
        asked.withLock { $0.formUnion(users) }
    }
}
