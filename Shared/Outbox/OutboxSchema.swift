import Persistence

/// The tables every service has in its own schema for durable events: the outbox it
/// publishes from, and the checkpoints and dead letters of the streams it consumes.
/// Each service lists ``migration`` as its first migration.
public enum OutboxSchema {
    /// Migration 1 of every service.
    public static let migration = Migration(1, "outbox and consumer checkpoints", [
        """
        CREATE TABLE outbox (
            id bigserial PRIMARY KEY,
            event_id text NOT NULL UNIQUE,
            stream text NOT NULL,
            type text NOT NULL,
            envelope text NOT NULL,
            seq bigint,
            created_at timestamptz NOT NULL DEFAULT now(),
            published_at timestamptz
        )
        """,
        "CREATE UNIQUE INDEX outbox_stream_seq ON outbox (stream, seq) WHERE seq IS NOT NULL",
        "CREATE INDEX outbox_unsequenced ON outbox (stream, id) WHERE seq IS NULL",
        "CREATE INDEX outbox_created ON outbox (created_at) WHERE seq IS NOT NULL",
        """
        CREATE TABLE outbox_streams (
            stream text PRIMARY KEY,
            last_seq bigint NOT NULL DEFAULT 0
        )
        """,
        """
        CREATE TABLE consumer_checkpoints (
            stream text PRIMARY KEY,
            seq bigint NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now()
        )
        """,
        """
        CREATE TABLE consumer_dead_letters (
            stream text NOT NULL,
            seq bigint NOT NULL,
            type text,
            envelope text NOT NULL,
            reason text NOT NULL,
            recorded_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (stream, seq)
        )
        """,
    ])

    /// A later migration of every service (numbered in its list): two indexes nothing read.
    /// An event wrote seven index entries: the primary key, `event_id` and `outbox_unsequenced`
    /// on insert, then the primary key, `event_id`, `outbox_stream_seq` and `outbox_created`
    /// again when the relay numbered it (an update of the indexed `seq`, never HOT); now four. `event_id` was unique, but ids are
    /// fresh UUIDv7s and nothing looks an event up by its id in the outbox; the retention sweep
    /// finds its rows through the primary key instead of `outbox_created` (the ids grow with
    /// the insertion order: ``OutboxRelay``'s `cleanup`). Issue 44.
    public static func leanIndexes(_ number: Int) -> Migration {
        Migration(number, "outbox: no index on event_id or created_at", [
            "ALTER TABLE outbox DROP CONSTRAINT IF EXISTS outbox_event_id_key",
            "DROP INDEX IF EXISTS outbox_created",
        ])
    }

    /// A later migration of every service (numbered in its list): no planner statistics for
    /// envelopes. Nothing filters or sorts by them, and auto-analyze of a busy outbox spent
    /// most of its time sorting thousands of kilobyte-long texts (seen in a load run's profile
    /// during a burst of fires). `extra` adds the service's own payload columns.
    public static func payloadStatistics(_ number: Int, extra: [String] = []) -> Migration {
        Migration(number, "no planner statistics for payload columns", [
            "ALTER TABLE outbox ALTER COLUMN envelope SET STATISTICS 0",
            "ALTER TABLE consumer_dead_letters ALTER COLUMN envelope SET STATISTICS 0",
        ] + extra)
    }

    /// A later migration (numbered in its list) for the tables every burst rewrites:
    ///
    /// - Planner statistics from a small sample for `tables`. Auto-analyze reads 300 × the
    ///   target rows of a table and sorts every column of them; with the default target (100)
    ///   it took a whole core for seconds a minute after a burst of completions (`analyze_rel`
    ///   and its sorts in a load run's profile). A sample of 3 000 rows describes these tables
    ///   as well: they are looked up by ids and dates, through indexes. Columns with statistics
    ///   off stay off.
    /// - Half-full pages for the outbox (`fillfactor` 50, pages written from now on): the relay
    ///   rewrites every row once to number it, and a new version on the same page is logged as
    ///   the bytes that changed, where one on another page is logged whole, envelope included
    ///   (3.3 × the WAL of numbering 5 000 rows).
    public static func burstSettings(_ number: Int, tables: [String], target: Int = 10) -> Migration {
        let list = tables.map { "'\($0)'" }.joined(separator: ", ")
        return Migration(number, "small statistics samples for the tables bursts rewrite; half-full outbox pages", [
            """
            DO $$
            DECLARE t regclass; c name;
            BEGIN
                FOREACH t IN ARRAY ARRAY[\(list)]::regclass[] LOOP
                    FOR c IN SELECT attname FROM pg_attribute
                             WHERE attrelid = t AND attnum > 0 AND NOT attisdropped AND attstattarget IS DISTINCT FROM 0 LOOP
                        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET STATISTICS \(target)', t, c);
                    END LOOP;
                END LOOP;
            END $$
            """,
            "ALTER TABLE outbox SET (fillfactor = 50)",
        ])
    }
}
