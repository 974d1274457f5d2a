import PostgresNIO
import ServiceKit

/// The alarms service's part of a data export: the user's alarms (deleted ones included while
/// kept), their own completions (of any alarm: their data, whatever the plan), the completions
/// others made of their alarms while the user is on Plus or Premium (the history Free locks,
/// US-5.2; finding 9), their snooze state, and the descriptions of their alarms' photos.
enum AlarmsExport {
    static let sections: [ExportSection] = [
        ExportSection("alarms") { uid, after, limit in
            "SELECT id, to_jsonb(a)::text FROM alarms a WHERE owner_id = \(uid) AND id > \(after) ORDER BY id LIMIT \(limit)"
        },
        ExportSection("completions") { uid, after, limit in
            """
            SELECT c.id, to_jsonb(c)::text FROM completions c
            WHERE (c.user_id = \(uid)
                   OR (c.user_id IS NULL AND c.alarm_id IN (SELECT id FROM alarms WHERE owner_id = \(uid)))
                   OR (c.alarm_id IN (SELECT id FROM alarms WHERE owner_id = \(uid))
                       AND EXISTS (SELECT 1 FROM user_tiers t WHERE t.user_id = \(uid) AND t.tier IN ('plus', 'premium'))))
              AND c.id > \(after)
            ORDER BY c.id LIMIT \(limit)
            """
        },
        ExportSection("calendarFeeds") { uid, after, limit in
            """
            SELECT id, (to_jsonb(f) - 'token_hash')::text FROM calendar_feeds f WHERE user_id = \(uid) AND id > \(after) ORDER BY id LIMIT \(limit)
            """
        },
        // Each photo's description; its bytes are at the alarm's photoURL.
        ExportSection("photos") { uid, after, limit in
            "SELECT alarm_id, to_jsonb(p)::text FROM photos p WHERE owner_id = \(uid) AND alarm_id > \(after) ORDER BY alarm_id LIMIT \(limit)"
        },
        ExportSection("snoozes") { uid, after, limit in
            """
            SELECT s.alarm_id || '/' || s.occurrence_at::text, to_jsonb(s)::text FROM snoozes s
            WHERE (s.updated_by = \(uid) OR s.alarm_id IN (SELECT id FROM alarms WHERE owner_id = \(uid)))
              AND s.alarm_id || '/' || s.occurrence_at::text > \(after)
            ORDER BY 1 LIMIT \(limit)
            """
        },
    ]
}
