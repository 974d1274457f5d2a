import Outbox
import Persistence

/// The scheduler schema, in order.
enum SchedulerMigrations {
    static let all: [Migration] = [
        OutboxSchema.migration,
        Migration(2, "alarms read model, timers, fire log, leases, replicas", [
            """
            CREATE TABLE alarms (
                alarm_id text PRIMARY KEY,
                partition integer NOT NULL,
                version integer NOT NULL,
                owner_id text NOT NULL,
                title text NOT NULL,
                timezone text NOT NULL,
                time_of_day text NOT NULL,
                next_fire_date timestamptz,
                active boolean NOT NULL,
                offsets integer[] NOT NULL,
                members text[] NOT NULL,
                alert_members text[] NOT NULL,
                group_id text,
                assigned_to text
            )
            """,
            // The upcoming occurrences: one row per pending fire, warning, re-fire or missed check.
            """
            CREATE TABLE timers (
                id bigserial PRIMARY KEY,
                partition integer NOT NULL,
                alarm_id text NOT NULL,
                kind text NOT NULL,
                occurrence_at timestamptz NOT NULL,
                due_at timestamptz NOT NULL,
                offset_minutes integer NOT NULL DEFAULT 0,
                snooze_count integer NOT NULL DEFAULT 0,
                UNIQUE (alarm_id, kind, occurrence_at, offset_minutes, snooze_count)
            )
            """,
            "CREATE INDEX timers_partition_due ON timers (partition, due_at)",
            "CREATE INDEX timers_due ON timers (due_at)",
            // What fired, exactly once per alarm, kind, occurrence, offset and snooze.
            """
            CREATE TABLE fires (
                alarm_id text NOT NULL,
                kind text NOT NULL,
                occurrence_at timestamptz NOT NULL,
                offset_minutes integer NOT NULL,
                snooze_count integer NOT NULL,
                due_at timestamptz NOT NULL,
                fired_at timestamptz NOT NULL,
                partition integer NOT NULL,
                epoch bigint NOT NULL,
                instance text NOT NULL,
                outcome text NOT NULL DEFAULT 'fired',
                PRIMARY KEY (alarm_id, kind, occurrence_at, offset_minutes, snooze_count)
            )
            """,
            "CREATE INDEX fires_fired_at ON fires (fired_at)",
            """
            CREATE TABLE leases (
                partition integer PRIMARY KEY,
                owner text,
                epoch bigint NOT NULL DEFAULT 0,
                expires_at timestamptz NOT NULL DEFAULT 'epoch'
            )
            """,
            """
            CREATE TABLE replicas (
                instance text PRIMARY KEY,
                started_at timestamptz NOT NULL DEFAULT now(),
                heartbeat_at timestamptz NOT NULL DEFAULT now(),
                stats jsonb NOT NULL DEFAULT '{}'
            )
            """,
        ]),
        Migration(3, "the trace that scheduled each alarm's timers, so its fire links back to it", [
            "ALTER TABLE alarms ADD COLUMN traceparent text",
        ]),
        OutboxSchema.payloadStatistics(4),
        Migration(5, "fires remember the event that announced them, so a fire announced early can be withdrawn", [
            "ALTER TABLE fires ADD COLUMN event_id text",
        ]),
        OutboxSchema.burstSettings(6, tables: ["outbox", "alarms", "timers", "fires"]),
        // Every timer a completion or a fire schedules was also entered in `timers_due`, which
        // only the status page's count of timers due within the horizon read; that count now
        // takes `timers_partition_due` one partition at a time. The read model's rows, which
        // every alarm change rewrites and whose only index is the key, keep room on their page
        // so the new version goes beside the old one (a HOT update).
        Migration(7, "drop the timers index only the status count read; room on the read model's pages", [
            "DROP INDEX IF EXISTS timers_due",
            "ALTER TABLE alarms SET (fillfactor = 70)",
        ]),
        OutboxSchema.leanIndexes(8),
    ]
}
