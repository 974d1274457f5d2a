import Outbox
import Persistence

/// The accounts schema, in order.
enum AccountsMigrations {
    static let all: [Migration] = [
        OutboxSchema.migration,
        Migration(2, "users, sessions, refresh tokens, devices, signing keys", [
            """
            CREATE TABLE users (
                id text PRIMARY KEY,
                email text NOT NULL,
                email_key text NOT NULL UNIQUE,
                password_hash text NOT NULL,
                display_name text NOT NULL,
                photo_url text,
                tier text NOT NULL DEFAULT 'free',
                settings jsonb NOT NULL,
                platform text,
                app_version text,
                fcm_token text,
                migrated_at timestamptz,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE TABLE sessions (
                id text PRIMARY KEY,
                user_id text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                revoked_at timestamptz,
                revoke_reason text
            )
            """,
            "CREATE INDEX sessions_user ON sessions (user_id)",
            "CREATE INDEX sessions_revoked ON sessions (revoked_at) WHERE revoked_at IS NOT NULL",
            """
            CREATE TABLE refresh_tokens (
                token_hash text PRIMARY KEY,
                session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                user_id text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                expires_at timestamptz NOT NULL,
                rotated_at timestamptz
            )
            """,
            "CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id)",
            """
            CREATE TABLE devices (
                user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                device_id text NOT NULL,
                platform text NOT NULL,
                push_provider text,
                push_token text,
                webhook_url text,
                app_version text,
                timezone text,
                locale text,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (user_id, device_id)
            )
            """,
            """
            CREATE TABLE signing_keys (
                kid text PRIMARY KEY,
                private_key text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                retired_at timestamptz
            )
            """,
        ]),
        Migration(3, "groups and members", [
            """
            CREATE TABLE groups (
                id text PRIMARY KEY,
                name text NOT NULL,
                description text,
                owner_id text NOT NULL,
                icon_name text NOT NULL,
                max_members integer NOT NULL DEFAULT 10,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE TABLE group_members (
                group_id text NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
                user_id text NOT NULL,
                role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
                joined_at timestamptz NOT NULL DEFAULT now(),
                invited_by text,
                PRIMARY KEY (group_id, user_id)
            )
            """,
            "CREATE INDEX group_members_user ON group_members (user_id)",
        ]),
        OutboxSchema.payloadStatistics(4),
        Migration(5, "provider identities", [
            // Sign in with Apple or Google: one account per provider identity (iss, sub).
            """
            CREATE TABLE identities (
                issuer text NOT NULL,
                subject text NOT NULL,
                user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                email text,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (issuer, subject)
            )
            """,
            "CREATE INDEX identities_user ON identities (user_id)",
        ]),
        Migration(6, "email tokens and the mail outbox", [
            "ALTER TABLE users ADD COLUMN email_verified_at timestamptz",
            // Password-reset and verification tokens: only their SHA-256 is kept; single use.
            """
            CREATE TABLE email_tokens (
                token_hash text PRIMARY KEY,
                user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                purpose text NOT NULL CHECK (purpose IN ('reset', 'verify')),
                email text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                expires_at timestamptz NOT NULL,
                used_at timestamptz
            )
            """,
            "CREATE INDEX email_tokens_user ON email_tokens (user_id)",
            // Mails are queued in the transaction that decides them and sent after it commits.
            """
            CREATE TABLE mail_outbox (
                id bigserial PRIMARY KEY,
                user_id text REFERENCES users (id) ON DELETE CASCADE,
                recipient text NOT NULL,
                subject text NOT NULL,
                body text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                attempts integer NOT NULL DEFAULT 0,
                next_attempt_at timestamptz NOT NULL DEFAULT now(),
                sent_at timestamptz,
                last_error text
            )
            """,
            "CREATE INDEX mail_outbox_pending ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL",
        ]),
        Migration(7, "signing key rotation and encryption at rest", [
            // The private key moves to `private_key_sealed` (AES-GCM under the key-encryption
            // key) at the first start with one configured; `private_key` is then null.
            "ALTER TABLE signing_keys ALTER COLUMN private_key DROP NOT NULL",
            "ALTER TABLE signing_keys ADD COLUMN private_key_sealed text",
            // The raw public key, base64url (the JWK `x`): published without opening the private one.
            "ALTER TABLE signing_keys ADD COLUMN public_key text",
            // Set when a rotation replaced the key: it is published (verifies) until then.
            "ALTER TABLE signing_keys ADD COLUMN retire_after timestamptz",
            // Before, the key in use was the oldest one not retired, and only it was published:
            // any other was never used, so it is retired.
            """
            UPDATE signing_keys SET retired_at = now()
            WHERE retired_at IS NULL
              AND kid <> (SELECT kid FROM signing_keys WHERE retired_at IS NULL ORDER BY created_at, kid LIMIT 1)
            """,
            // One active key at most, whatever the races.
            "CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys ((true)) WHERE retired_at IS NULL AND retire_after IS NULL",
            """
            ALTER TABLE signing_keys ADD CONSTRAINT signing_keys_private_key_kept
                CHECK (retired_at IS NOT NULL OR private_key IS NOT NULL OR private_key_sealed IS NOT NULL)
            """,
        ]),
        // Group rules (US-10.2, US-10.3) and each member's completion pushes.
        Migration(8, "group settings", [
            """
            ALTER TABLE groups ADD COLUMN alarm_editors text NOT NULL DEFAULT 'admins'
                CHECK (alarm_editors IN ('owner', 'admins', 'everyone'))
            """,
            "ALTER TABLE groups ADD COLUMN pending_window_minutes integer CHECK (pending_window_minutes BETWEEN 15 AND 10080)",
            "ALTER TABLE group_members ADD COLUMN completion_pushes boolean NOT NULL DEFAULT true",
        ]),
        // Analytics by consent (US-13.1) and the home zone of fixed-time alarms (US-7.3).
        Migration(9, "analytics consent and home time zone", [
            "ALTER TABLE users ADD COLUMN IF NOT EXISTS analytics_consent boolean NOT NULL DEFAULT false",
            "ALTER TABLE users ADD COLUMN IF NOT EXISTS home_timezone text",
        ]),
        OutboxSchema.leanIndexes(10),
        // The gateway's limits, shared by its replicas (ThrottleHandlers, issue 57).
        Migration(11, "shared throttle state", [
            "CREATE TABLE throttle_buckets (bucket text NOT NULL, key text NOT NULL, tokens double precision NOT NULL, at timestamptz NOT NULL, PRIMARY KEY (bucket, key))",
            "CREATE TABLE throttle_failures (key text PRIMARY KEY, count integer NOT NULL, locked_until timestamptz NOT NULL, at timestamptz NOT NULL)",
        ]),
    ]
}
