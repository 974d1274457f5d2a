import Foundation
import Logging
import Persistence
import PostgresNIO

/// SQL of the delivery worker (claiming, recording and settling deliveries) and of the
/// retention sweep. Statements in a worker's transaction log to its logger (`logger:`); the
/// others run on the pool.
extension NotificationStore {
    // MARK: Delivery worker

    /// A claimed delivery as read from its row: its target, its content JSON (not yet
    /// decoded) and the number of attempts including this one.
    struct ClaimedDelivery: Sendable {
        var target: PushTarget
        var content: String
        var attempts: Int32
    }

    /// Claims up to `limit` due pending deliveries (`FOR UPDATE SKIP LOCKED`, so replicas share
    /// the work), as a prepared statement on the pool: leases each for a minute by moving its
    /// `next_attempt_at` and counts the attempt. Returns the claimed rows, in the order the
    /// database returned them.
    /// How far a claim moves a row's next attempt: the lease within which its send starts and
    /// ends (``DeliveryLease``).
    static let leaseSeconds = 60

    func claimDueDeliveries(limit: Int) async throws -> [ClaimedDelivery] {
        let rows = try await database.prepared("""
            UPDATE deliveries d SET next_attempt_at = now() + make_interval(secs => \(Self.leaseSeconds)), attempts = d.attempts + 1
            FROM (SELECT id FROM deliveries WHERE state = 'pending' AND next_attempt_at <= now()
                  ORDER BY next_attempt_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED) s
            WHERE d.id = s.id
            RETURNING d.id, d.event_id, d.user_id, d.device_id, d.provider, d.token, d.webhook_url, d.content::text, d.attempts
            """)
        var out: [ClaimedDelivery] = []
        for try await (id, event, user, device, provider, token, url, content, attempts)
            in rows.decode((Int64, String, String, String, String, String?, String?, String, Int32).self) {
            let target = PushTarget(deliveryId: id, eventId: event, userId: user, deviceId: device, provider: provider, token: token, webhookUrl: url)
            out.append(ClaimedDelivery(target: target, content: content, attempts: attempts))
        }
        return out
    }

    /// Finishes delivery `id` in `state` with `error`, on the pool (outside the worker's
    /// transaction).
    func finishDelivery(_ id: Int64, state: String, error: String) async throws {
        try await database.query("UPDATE deliveries SET state = \(state), finished_at = now(), last_error = \(error) WHERE id = \(id)")
    }

    /// Inserts a round's attempts with one statement, column by column (row `i` of every array
    /// is one attempt; an empty `errors` element is stored as NULL).
    func insertAttempts(deliveryIds: [Int64], attempts: [Int32], providers: [String], statuses: [Int32], outcomes: [String],
                        latenciesMs: [Double], errors: [String], on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("""
            INSERT INTO attempts (delivery_id, attempt, provider, status, outcome, latency_ms, error)
            SELECT d, a, p, s, o, l, NULLIF(e, '') FROM unnest(\(deliveryIds)::bigint[], \(attempts)::int[],
                \(providers)::text[], \(statuses)::int[], \(outcomes)::text[],
                \(latenciesMs)::float8[], \(errors)::text[])
                AS x(d, a, p, s, o, l, e)
            """, logger: logger)
    }

    /// Puts claimed deliveries back for `seconds` without counting their attempt (their send
    /// did not start: ``SendLanes`` had no slot for them).
    /// Only rows whose attempt count is still the one this claim set are put back: a row whose
    /// lease ended and that another worker claimed again (its count moved on) is left alone.
    func putBack(ids: [Int64], attempts: [Int32], forSeconds seconds: Double, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("""
            UPDATE deliveries d SET next_attempt_at = now() + make_interval(secs => \(seconds)), attempts = greatest(d.attempts - 1, 0)
            FROM unnest(\(ids)::bigint[], \(attempts)::int[]) AS x(id, attempt)
            WHERE d.id = x.id AND d.attempts = x.attempt AND d.state = 'pending'
            """, logger: logger)
    }

    /// Marks the deliveries `ids` sent, with one statement.
    func markSent(ids: [Int64], on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("""
            UPDATE deliveries SET state = 'sent', finished_at = now(), last_error = NULL WHERE id = ANY(\(ids)::bigint[])
            """, logger: logger)
    }

    /// Marks delivery `id` sent.
    func markSent(id: Int64, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("UPDATE deliveries SET state = 'sent', finished_at = now(), last_error = NULL WHERE id = \(id)", logger: logger)
    }

    /// Leaves delivery `id` pending, to be tried again in `wait` seconds, noting `reason`.
    func scheduleRetry(_ id: Int64, afterSeconds wait: TimeInterval, reason: String?, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("""
            UPDATE deliveries SET next_attempt_at = now() + make_interval(secs => \(wait)), last_error = \(reason) WHERE id = \(id)
            """, logger: logger)
    }

    /// Marks delivery `id` failed, noting `reason`.
    func markFailed(_ id: Int64, reason: String?, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("""
            UPDATE deliveries SET state = 'failed', finished_at = now(), last_error = \(reason) WHERE id = \(id)
            """, logger: logger)
    }

    /// Marks the delivery of `target` unregistered, and with it every delivery still pending to
    /// the same device of the same user with the same token and webhook, noting `reason`.
    func markUnregistered(_ target: PushTarget, reason: String?, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("""
            UPDATE deliveries SET state = 'unregistered', finished_at = now(), last_error = \(reason)
            WHERE id = \(target.deliveryId) OR (state = 'pending' AND user_id = \(target.userId) AND device_id = \(target.deviceId)
                                 AND token IS NOT DISTINCT FROM \(target.token) AND webhook_url IS NOT DISTINCT FROM \(target.webhookUrl))
            """, logger: logger)
    }

    /// Deletes the device of `target` if it still has the token and webhook `target` was sent
    /// to (they are dead).
    func deleteUnregisteredDevice(_ target: PushTarget, on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("""
            DELETE FROM devices WHERE user_id = \(target.userId) AND device_id = \(target.deviceId)
                AND token IS NOT DISTINCT FROM \(target.token) AND webhook_url IS NOT DISTINCT FROM \(target.webhookUrl)
            """, logger: logger)
    }

    // MARK: Retention

    /// Deletes the inbox rows created more than `seconds` ago; returns how many.
    func deleteInbox(olderThanSeconds seconds: Double) async throws -> Int {
        try await database.query("""
            WITH gone AS (DELETE FROM inbox WHERE created_at < now() - make_interval(secs => \(seconds)) RETURNING 1) SELECT count(*)::int FROM gone
            """).first(Int.self) ?? 0
    }

    /// Deletes the deliveries that finished (any state but pending) more than `seconds` ago.
    func deleteFinishedDeliveries(olderThanSeconds seconds: Double) async throws {
        try await database.query("""
            DELETE FROM deliveries WHERE state <> 'pending' AND finished_at < now() - make_interval(secs => \(seconds))
            """)
    }

    /// Deletes the delivery attempts made more than `seconds` ago.
    func deleteAttempts(olderThanSeconds seconds: Double) async throws {
        try await database.query("DELETE FROM attempts WHERE at < now() - make_interval(secs => \(seconds))")
    }
}
