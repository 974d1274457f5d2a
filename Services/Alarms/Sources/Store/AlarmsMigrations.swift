import Outbox
import Persistence

/// The alarms schema, in order.
enum AlarmsMigrations {
    static let all: [Migration] = [
        OutboxSchema.migration,
        Migration(2, "alarms, completions, delta feed, read models", [
            """
            CREATE TABLE alarms (
                id text PRIMARY KEY,
                owner_id text NOT NULL,
                title text NOT NULL,
                note text,
                photo_url text,
                photo_local_path text,
                category text,
                schedule jsonb NOT NULL,
                schedule_type text NOT NULL,
                sound_id text NOT NULL,
                vibration_enabled boolean NOT NULL,
                snooze_duration_minutes integer NOT NULL,
                pre_alarm_warning_enabled boolean NOT NULL,
                pre_alarm_warning_hours integer NOT NULL,
                pre_alarm_offsets text[] NOT NULL DEFAULT '{}',
                require_dismiss_action boolean NOT NULL,
                is_active boolean NOT NULL,
                is_paused boolean NOT NULL,
                next_fire_date timestamptz,
                last_fired_date timestamptz,
                last_completed_date timestamptz,
                shared_with text[] NOT NULL DEFAULT '{}',
                group_id text,
                assigned_to text,
                create_fingerprint text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now(),
                deleted_at timestamptz,
                version integer NOT NULL DEFAULT 1
            )
            """,
            // §4.2 and Appendix A: one index per query variant.
            "CREATE INDEX alarms_owner_next ON alarms (owner_id, next_fire_date, id) WHERE deleted_at IS NULL",
            "CREATE INDEX alarms_owner_active_next ON alarms (owner_id, next_fire_date, id) WHERE deleted_at IS NULL AND is_active",
            "CREATE INDEX alarms_shared_with ON alarms USING gin (shared_with) WHERE deleted_at IS NULL",
            "CREATE INDEX alarms_group_next ON alarms (group_id, next_fire_date, id) WHERE deleted_at IS NULL AND group_id IS NOT NULL",
            "CREATE INDEX alarms_owner_created ON alarms (owner_id, created_at)",
            "CREATE INDEX alarms_deleted ON alarms (deleted_at) WHERE deleted_at IS NOT NULL",
            """
            CREATE TABLE completions (
                id text PRIMARY KEY,
                alarm_id text NOT NULL,
                user_id text,
                user_display_name text,
                status text NOT NULL,
                scheduled_date timestamptz NOT NULL,
                completed_at timestamptz NOT NULL,
                note text,
                on_time boolean NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                UNIQUE (alarm_id, scheduled_date)
            )
            """,
            "CREATE INDEX completions_alarm_completed ON completions (alarm_id, completed_at DESC, id DESC)",
            "CREATE INDEX completions_alarm_scheduled ON completions (alarm_id, scheduled_date DESC)",
            // The delta feed: per user, the latest change number of each alarm they saw change.
            """
            CREATE TABLE feed_heads (
                user_id text PRIMARY KEY,
                last_seq bigint NOT NULL DEFAULT 0
            )
            """,
            """
            CREATE TABLE feed_entries (
                user_id text NOT NULL,
                alarm_id text NOT NULL,
                seq bigint NOT NULL,
                removed boolean NOT NULL,
                PRIMARY KEY (user_id, alarm_id)
            )
            """,
            "CREATE INDEX feed_entries_user_seq ON feed_entries (user_id, seq)",
            // Read models fed by other services' events (or the admin request, for tiers).
            """
            CREATE TABLE user_tiers (
                user_id text PRIMARY KEY,
                tier text NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE TABLE users (
                user_id text PRIMARY KEY,
                display_name text NOT NULL,
                email text NOT NULL,
                timezone text NOT NULL
            )
            """,
            """
            CREATE TABLE group_members (
                group_id text NOT NULL,
                user_id text NOT NULL,
                role text NOT NULL,
                PRIMARY KEY (group_id, user_id)
            )
            """,
            "CREATE INDEX group_members_user ON group_members (user_id)",
        ]),
        Migration(3, "snoozes", [
            // Consecutive snoozes per occurrence (at most 3, US-1.4).
            """
            CREATE TABLE snoozes (
                alarm_id text NOT NULL,
                occurrence_at timestamptz NOT NULL,
                count integer NOT NULL,
                refire_at timestamptz NOT NULL,
                updated_at timestamptz NOT NULL,
                updated_by text NOT NULL,
                PRIMARY KEY (alarm_id, occurrence_at)
            )
            """,
        ]),
        OutboxSchema.payloadStatistics(4, extra: [
            "ALTER TABLE alarms ALTER COLUMN schedule SET STATISTICS 0",
        ]),
        Migration(5, "calendar feeds", [
            // Secret feed URLs: only the SHA-256 of the token is kept.
            """
            CREATE TABLE calendar_feeds (
                id text PRIMARY KEY,
                token_hash text NOT NULL UNIQUE,
                user_id text NOT NULL,
                scope text NOT NULL CHECK (scope IN ('me', 'group')),
                group_id text,
                created_at timestamptz NOT NULL DEFAULT now(),
                last_fetched_at timestamptz
            )
            """,
            "CREATE INDEX calendar_feeds_user ON calendar_feeds (user_id)",
        ]),
        Migration(6, "photos", [
            // One photo per alarm; its bytes are in the photo storage under object_key.
            """
            CREATE TABLE photos (
                alarm_id text PRIMARY KEY,
                owner_id text NOT NULL,
                object_key text NOT NULL,
                content_type text NOT NULL,
                etag text NOT NULL,
                size integer NOT NULL,
                updated_at timestamptz NOT NULL
            )
            """,
            "CREATE INDEX photos_object_key ON photos (object_key)",
            // Keys whose bytes the sweep removes from the storage, not before not_before.
            """
            CREATE TABLE photo_deletions (
                object_key text PRIMARY KEY,
                not_before timestamptz NOT NULL DEFAULT now()
            )
            """,
            // The embedded storage (used unless CHRONIR_S3_ENDPOINT is set).
            "CREATE TABLE photo_blobs (object_key text PRIMARY KEY, bytes bytea NOT NULL)",
            // Whatever deletes an alarm (its owner, a purge of the account) queues its photo.
            """
            CREATE FUNCTION photos_follow_alarm() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
            BEGIN
                IF TG_OP = 'DELETE' OR NEW.deleted_at IS NOT NULL THEN
                    INSERT INTO photo_deletions (object_key) SELECT object_key FROM photos WHERE alarm_id = OLD.id
                        ON CONFLICT (object_key) DO UPDATE SET not_before = now();
                    DELETE FROM photos WHERE alarm_id = OLD.id;
                END IF;
                RETURN NULL;
            END
            $$
            """,
            """
            CREATE TRIGGER alarms_photo_cleanup AFTER DELETE OR UPDATE OF deleted_at ON alarms
                FOR EACH ROW EXECUTE FUNCTION photos_follow_alarm()
            """,
        ]),
        Migration(7, "product analytics", [
            // The key of the pseudonyms (HMAC-SHA256 of the uid), made at first start unless
            // CHRONIR_ANALYTICS_KEY gives one.
            "CREATE TABLE analytics_key (id integer PRIMARY KEY CHECK (id = 1), key bytea NOT NULL)",
            """
            CREATE TABLE analytics_users (
                pseudonym text PRIMARY KEY,
                signup_day date NOT NULL,
                tier text NOT NULL DEFAULT 'free',
                reached_plus_at timestamptz,
                reached_premium_at timestamptz
            )
            """,
            "CREATE INDEX analytics_users_signup ON analytics_users (signup_day)",
            """
            CREATE TABLE analytics_events (
                id bigserial PRIMARY KEY,
                name text NOT NULL,
                pseudonym text NOT NULL,
                occurred_at timestamptz NOT NULL,
                day date NOT NULL,
                properties jsonb NOT NULL DEFAULT '{}'
            )
            """,
            "CREATE INDEX analytics_events_day ON analytics_events (day, pseudonym)",
            "CREATE INDEX analytics_events_pseudonym ON analytics_events (pseudonym)",
        ]),
        // Every mark inserted into it too; `UNIQUE (alarm_id, scheduled_date)` serves the same
        // reads (the streak scans it backwards, the batch of marks looks pairs up in it).
        Migration(8, "drop the completions index the unique constraint duplicates", [
            "DROP INDEX IF EXISTS completions_alarm_scheduled",
        ]),
        OutboxSchema.burstSettings(9, tables: ["outbox", "alarms", "completions", "feed_entries", "feed_heads", "analytics_events"]),
        // A mark changes an alarm's next fire date, activity, version and times, a fire its last
        // fire date, a feed bump each member's entry number and head. With none of those
        // indexed (or in an index's predicate) and room left on the page, PostgreSQL writes the
        // new version beside the old one and adds no index entry (a HOT update): before, every
        // mark wrote a new entry in each of the alarm's seven indexes, the GIN one included, and
        // one in each of the feed entry's two. The lists the dropped indexes ordered filter by
        // owner, group or sharer (`alarms_owner_created`, `alarms_group`, the GIN index) and sort
        // that user's alarms; the feed reads one user's entries by primary key and sorts them.
        Migration(10, "marks, fires and feed bumps update rows in place: no index on what they change", [
            "DROP INDEX IF EXISTS alarms_owner_next",
            "DROP INDEX IF EXISTS alarms_owner_active_next",
            "DROP INDEX IF EXISTS alarms_group_next",
            "CREATE INDEX IF NOT EXISTS alarms_group ON alarms (group_id) WHERE deleted_at IS NULL AND group_id IS NOT NULL",
            "DROP INDEX IF EXISTS feed_entries_user_seq",
            "ALTER TABLE alarms SET (fillfactor = 70)",
            "ALTER TABLE feed_entries SET (fillfactor = 70)",
            "ALTER TABLE feed_heads SET (fillfactor = 50)",
        ]),
        // What a downgrade takes away, kept for an upgrade to give back (§9.4).
        Migration(11, "suspended sharing and tier deactivations", [
            """
            CREATE TABLE suspended_shares (
                alarm_id text PRIMARY KEY,
                owner_id text NOT NULL,
                shared_with text[] NOT NULL,
                group_id text,
                assigned_to text,
                suspended_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            "CREATE INDEX suspended_shares_owner ON suspended_shares (owner_id)",
            "CREATE INDEX suspended_shares_group ON suspended_shares (group_id) WHERE group_id IS NOT NULL",
            """
            CREATE TABLE tier_deactivations (
                alarm_id text PRIMARY KEY,
                owner_id text NOT NULL,
                deactivated_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            "CREATE INDEX tier_deactivations_owner ON tier_deactivations (owner_id)",
        ]),
        // The rules of each group, from the accounts stream (who edits its alarms, its window).
        Migration(12, "group settings", [
            """
            CREATE TABLE groups (
                id text PRIMARY KEY,
                alarm_editors text NOT NULL DEFAULT 'admins',
                pending_window_minutes integer
            )
            """,
        ]),
        // The everyday rules (issue 42): the snooze state every device shows, the snoozes
        // before each mark and late marks in the history, why a tier dropped (CA013), and the
        // user's default snooze length for new alarms.
        Migration(13, "snooze state, late marks, lapsed subscriptions, default snooze", [
            "ALTER TABLE alarms ADD COLUMN IF NOT EXISTS max_snooze_count integer NOT NULL DEFAULT 3",
            "ALTER TABLE alarms ADD COLUMN IF NOT EXISTS snoozed_until timestamptz",
            "ALTER TABLE alarms ADD COLUMN IF NOT EXISTS snooze_count integer NOT NULL DEFAULT 0",
            "ALTER TABLE completions ADD COLUMN IF NOT EXISTS snooze_count integer NOT NULL DEFAULT 0",
            "ALTER TABLE completions ADD COLUMN IF NOT EXISTS late_at timestamptz",
            "ALTER TABLE user_tiers ADD COLUMN IF NOT EXISTS lapsed_from text",
            "ALTER TABLE user_tiers ADD COLUMN IF NOT EXISTS lapsed_at timestamptz",
            "ALTER TABLE users ADD COLUMN IF NOT EXISTS default_snooze_minutes integer",
            // The zone floating alarms follow (US-7.3) and when it was seen.
            "ALTER TABLE users ADD COLUMN IF NOT EXISTS current_zone text",
            "ALTER TABLE users ADD COLUMN IF NOT EXISTS current_zone_at timestamptz",
            "ALTER TABLE users ADD COLUMN IF NOT EXISTS home_zone text",
            // Analytics by consent (US-13.1): the pseudonyms of those who agreed.
            // Photo uploads of the last minute per user (§13.3: 3 a minute).
            "CREATE TABLE IF NOT EXISTS photo_uploads (user_id text NOT NULL, at timestamptz NOT NULL)",
            "CREATE INDEX IF NOT EXISTS photo_uploads_user ON photo_uploads (user_id, at)",
            "CREATE TABLE IF NOT EXISTS analytics_consent (pseudonym text PRIMARY KEY, since timestamptz NOT NULL DEFAULT now())",
        ]),
        // A mark writes less (issue 44): every mark inserted an entry into
        // `completions_alarm_completed` at a random place (keyed by alarm), which only the history
        // page and the last completion read; both filter by alarm, which `UNIQUE (alarm_id,
        // scheduled_date)` answers, and sort that alarm's logs (one per occurrence: tens a year).
        // Alarm pages half full: a mark's new row version stays on its page more often (an
        // update in place, no index entry); new pages only, so an existing table gets it as it
        // is rewritten.
        Migration(14, "a mark writes less: no completion-time index, alarm pages half full", [
            "DROP INDEX IF EXISTS completions_alarm_completed",
            "ALTER TABLE alarms SET (fillfactor = 50)",
        ]),
        OutboxSchema.leanIndexes(15),
    ]
}
