import Outbox
import Persistence

/// The notifications schema, in order.
enum NotificationsMigrations {
    static let all: [Migration] = [
        OutboxSchema.migration,
        Migration(2, "devices, inbox, deliveries, attempts", [
            // Where each user's pushes go: a projection of the accounts devices.
            """
            CREATE TABLE devices (
                user_id text NOT NULL,
                device_id text NOT NULL,
                platform text NOT NULL,
                provider text NOT NULL,
                token text,
                webhook_url text,
                updated_at timestamptz NOT NULL,
                PRIMARY KEY (user_id, device_id)
            )
            """,
            """
            CREATE TABLE inbox (
                id bigserial PRIMARY KEY,
                user_id text NOT NULL,
                event_id text NOT NULL,
                type text NOT NULL,
                title text NOT NULL,
                body text NOT NULL,
                data jsonb NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                acked_at timestamptz,
                UNIQUE (event_id, user_id)
            )
            """,
            "CREATE INDEX inbox_user ON inbox (user_id, id)",
            "CREATE INDEX inbox_created ON inbox (created_at)",
            // One push per (event, device), whatever happens to the event on the way.
            """
            CREATE TABLE deliveries (
                id bigserial PRIMARY KEY,
                event_id text NOT NULL,
                inbox_id bigint NOT NULL,
                user_id text NOT NULL,
                device_id text NOT NULL,
                provider text NOT NULL,
                token text,
                webhook_url text,
                content jsonb NOT NULL,
                state text NOT NULL DEFAULT 'pending',
                attempts integer NOT NULL DEFAULT 0,
                next_attempt_at timestamptz NOT NULL DEFAULT now(),
                last_error text,
                created_at timestamptz NOT NULL DEFAULT now(),
                finished_at timestamptz,
                UNIQUE (event_id, device_id)
            )
            """,
            "CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE state = 'pending'",
            "CREATE INDEX deliveries_finished ON deliveries (finished_at) WHERE state <> 'pending'",
            """
            CREATE TABLE attempts (
                id bigserial PRIMARY KEY,
                delivery_id bigint NOT NULL,
                attempt integer NOT NULL,
                provider text NOT NULL,
                status integer NOT NULL,
                outcome text NOT NULL,
                latency_ms double precision NOT NULL,
                error text,
                at timestamptz NOT NULL DEFAULT now()
            )
            """,
            "CREATE INDEX attempts_at ON attempts (at)",
        ]),
        OutboxSchema.payloadStatistics(3, extra: [
            "ALTER TABLE inbox ALTER COLUMN data SET STATISTICS 0",
            "ALTER TABLE inbox ALTER COLUMN title SET STATISTICS 0",
            "ALTER TABLE inbox ALTER COLUMN body SET STATISTICS 0",
            "ALTER TABLE deliveries ALTER COLUMN content SET STATISTICS 0",
        ]),
        OutboxSchema.burstSettings(4, tables: ["outbox", "inbox", "deliveries", "attempts"]),
        // Groups as the texts name them, and who turned completion pushes off (accounts stream).
        Migration(5, "groups read model", [
            "CREATE TABLE groups (id text PRIMARY KEY, name text NOT NULL)",
            """
            CREATE TABLE group_members (
                group_id text NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
                user_id text NOT NULL,
                display_name text,
                completion_pushes boolean NOT NULL DEFAULT true,
                PRIMARY KEY (group_id, user_id)
            )
            """,
            "CREATE INDEX group_members_user ON group_members (user_id)",
        ]),
        // Each user's plan as last seen on the accounts stream: a change is told to their open
        // pages and devices (`plan_changed`).
        Migration(6, "user tiers read model", [
            "CREATE TABLE user_tiers (user_id text PRIMARY KEY, tier text NOT NULL)",
        ]),
        OutboxSchema.leanIndexes(7),
    ]
}
