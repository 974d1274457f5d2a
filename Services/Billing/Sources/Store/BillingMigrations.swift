import Outbox
import Persistence

/// The billing schema, in order.
enum BillingMigrations {
    static let all: [Migration] = [
        OutboxSchema.migration,
        Migration(2, "subscriptions, processed notifications, entitlements", [
            // One row per store subscription (Apple original transaction, Google purchase token).
            """
            CREATE TABLE subscriptions (
                id text PRIMARY KEY,
                user_id text NOT NULL,
                platform text NOT NULL,
                product_id text NOT NULL,
                tier text NOT NULL,
                state text NOT NULL,
                original_transaction_id text NOT NULL,
                start_date timestamptz,
                expiry_date timestamptz,
                grace_expires_at timestamptz,
                auto_renewing boolean NOT NULL DEFAULT true,
                cancelled_at timestamptz,
                last_event_at timestamptz NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            "CREATE INDEX subscriptions_user ON subscriptions (user_id)",
            "CREATE INDEX subscriptions_due ON subscriptions (expiry_date) WHERE state IN ('active', 'grace')",
            """
            CREATE TABLE processed_notifications (
                id text PRIMARY KEY,
                store text NOT NULL,
                type text NOT NULL,
                result text NOT NULL,
                received_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            // The last tier published per user (what the other services were told).
            """
            CREATE TABLE entitlements (
                user_id text PRIMARY KEY,
                tier text NOT NULL,
                expires_at timestamptz,
                updated_at timestamptz NOT NULL DEFAULT now()
            )
            """,
        ]),
        Migration(3, "snooze ledger", [
            """
            CREATE TABLE snooze_ledger (
                transaction_id text PRIMARY KEY,
                user_id text NOT NULL,
                alarm_id text NOT NULL,
                occurrence_at timestamptz NOT NULL,
                sequence integer NOT NULL CHECK (sequence BETWEEN 1 AND 5),
                amount_cents integer NOT NULL,
                product_id text NOT NULL,
                purchased_at timestamptz NOT NULL,
                recorded_at timestamptz NOT NULL DEFAULT now(),
                UNIQUE (user_id, alarm_id, occurrence_at, sequence)
            )
            """,
            "CREATE INDEX snooze_ledger_user ON snooze_ledger (user_id, purchased_at)",
        ]),
        Migration(4, "snooze policies", [
            """
            CREATE TABLE snooze_policies (
                alarm_id text PRIMARY KEY,
                owner_id text NOT NULL,
                enabled boolean NOT NULL,
                free_snoozes integer NOT NULL CHECK (free_snoozes BETWEEN 0 AND 4),
                updated_at timestamptz NOT NULL DEFAULT now()
            )
            """,
        ]),
        OutboxSchema.payloadStatistics(5),
        OutboxSchema.leanIndexes(6),
    ]
}
