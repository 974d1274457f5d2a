import PostgresNIO
import ServiceKit

/// The notifications service's part of a data export: the inbox and what was delivered where.
enum NotificationsExport {
    static let sections: [ExportSection] = [
        ExportSection("notifications") { uid, after, limit in
            """
            SELECT lpad(id::text, 20, '0'), to_jsonb(n)::text FROM inbox n
            WHERE user_id = \(uid) AND lpad(id::text, 20, '0') > \(after) ORDER BY 1 LIMIT \(limit)
            """
        },
        ExportSection("deliveries") { uid, after, limit in
            """
            SELECT lpad(id::text, 20, '0'), (to_jsonb(d) - 'token')::text FROM deliveries d
            WHERE user_id = \(uid) AND lpad(id::text, 20, '0') > \(after) ORDER BY 1 LIMIT \(limit)
            """
        },
    ]
}
