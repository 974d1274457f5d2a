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
}
