import PostgresNIO
import ServiceKit

/// The billing service's part of a data export: subscriptions, the entitlement, paid snoozes
/// and snooze policies.
enum BillingExport {
    static let sections: [ExportSection] = [
        ExportSection("subscriptions") { uid, after, limit in
            "SELECT id, to_jsonb(s)::text FROM subscriptions s WHERE user_id = \(uid) AND id > \(after) ORDER BY id LIMIT \(limit)"
        },
        ExportSection("entitlement") { uid, after, limit in
            "SELECT user_id, to_jsonb(e)::text FROM entitlements e WHERE user_id = \(uid) AND user_id > \(after) ORDER BY 1 LIMIT \(limit)"
        },
        ExportSection("snoozeLedger") { uid, after, limit in
            """
            SELECT transaction_id, to_jsonb(l)::text FROM snooze_ledger l
            WHERE user_id = \(uid) AND transaction_id > \(after) ORDER BY transaction_id LIMIT \(limit)
            """
        },
        ExportSection("snoozePolicies") { uid, after, limit in
            """
            SELECT alarm_id, to_jsonb(p)::text FROM snooze_policies p
            WHERE owner_id = \(uid) AND alarm_id > \(after) ORDER BY alarm_id LIMIT \(limit)
            """
        },
    ]
}
