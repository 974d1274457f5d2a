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
}
