import Foundation
import Logging
import Messaging
import Outbox
import Persistence
import PostgresNIO
import ServiceLifecycle

/// Sends queued deliveries: claims due rows (`FOR UPDATE SKIP LOCKED`, so replicas share the
/// work), hands each to its provider, and records the attempt and the outcome. A claimed row is
/// leased for a minute by moving its `next_attempt_at`: a worker that dies mid-send leaves it to
/// be tried again, never lost. Graceful shutdown finishes the sends in flight.
final class DeliveryWorker: Service, Sendable {
    private let database: Database
    private let providers: [String: any PushProvider]
    private let policy: RetryPolicy
    private let telemetry: Telemetry
    private let logger: Logger
    private let poll: Duration
    private let concurrency: Int
    private let signal = WakeSignal()
    /// Deliveries claimed per round (sent `concurrency` at a time, recorded in one transaction).
    private var batchSize: Int { max(concurrency * 4, 256) }

    init(database: Database, providers: [String: any PushProvider], policy: RetryPolicy, telemetry: Telemetry, logger: Logger,
         poll: Duration, concurrency: Int) {
        self.database = database
        self.providers = providers
        self.policy = policy
        self.telemetry = telemetry
        self.logger = logger
        self.poll = poll
        self.concurrency = concurrency
    }

    /// New deliveries were queued.
    func wake() { signal.signal() }

    struct Claimed: Sendable {
        var target: PushTarget
        var content: PushContent
        var attempt: Int
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let batch = try await self.claim(limit: self.batchSize)
                    if batch.isEmpty {
                        await self.signal.wait(timeout: self.poll)
                        continue
                    }
                    // Sends in flight are not cancelled by shutdown: each finishes and is recorded.
                    let results = await Task { [self] in await self.send(batch) }.value
                    try await self.record(results)
                } catch {
                    self.logger.error("delivery loop: \(error)")
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }

    func claim(limit: Int) async throws -> [Claimed] {
        let rows = try await database.prepared("""
            UPDATE deliveries d SET next_attempt_at = now() + interval '60 seconds', attempts = d.attempts + 1
            FROM (SELECT id FROM deliveries WHERE state = 'pending' AND next_attempt_at <= now()
                  ORDER BY next_attempt_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED) s
            WHERE d.id = s.id
            RETURNING d.id, d.event_id, d.user_id, d.device_id, d.provider, d.token, d.webhook_url, d.content::text, d.attempts
            """)
        var out: [Claimed] = []
        for try await (id, event, user, device, provider, token, url, content, attempts)
            in rows.decode((Int64, String, String, String, String, String?, String?, String, Int32).self) {
            let target = PushTarget(deliveryId: id, eventId: event, userId: user, deviceId: device, provider: provider, token: token, webhookUrl: url)
            do {
                let c = try JSONCoding.decoder().decode(PushContent.self, from: Data(content.utf8))
                out.append(Claimed(target: target, content: c, attempt: Int(attempts)))
            } catch {
                try await finish(id, state: "failed", error: "undecodable content: \(error)")
            }
        }
        return out
    }

    struct Sent: Sendable {
        var claimed: Claimed
        var result: PushResult
        var latencyMs: Double
    }

    /// Sends a batch with at most `concurrency` pushes in flight.
    func send(_ batch: [Claimed]) async -> [Sent] {
        await withTaskGroup(of: Sent.self) { group in
            var out: [Sent] = []
            out.reserveCapacity(batch.count)
            var next = 0
            while next < batch.count, next < concurrency {
                let c = batch[next]
                group.addTask { await self.deliver(c) }
                next += 1
            }
            while let done = await group.next() {
                out.append(done)
                if next < batch.count {
                    let c = batch[next]
                    group.addTask { await self.deliver(c) }
                    next += 1
                }
            }
            return out
        }
    }

    func deliver(_ c: Claimed) async -> Sent {
        let started = ContinuousClock.now
        let result: PushResult
        if let provider = providers[c.target.provider] {
            result = await provider.send(c.content, to: c.target)
        } else {
            result = PushResult(status: 0, outcome: .failed, reason: "provider \(c.target.provider) is not configured")
        }
        let elapsed = ContinuousClock.now - started
        let ms = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        telemetry.counter("chronir_push_attempts_total", [("provider", c.target.provider), ("outcome", result.outcome.rawValue)]).increment()
        telemetry.timer("chronir_push_latency_seconds", [("provider", c.target.provider)]).recordNanoseconds(Int64(ms * 1e6))
        return Sent(claimed: c, result: result, latencyMs: ms)
    }

    /// Records a round: every attempt and every successful delivery in bulk, the rest one by one.
    func record(_ results: [Sent]) async throws {
        guard !results.isEmpty else { return }
        try await database.transaction { conn in
            let outcomes = results.map { s -> String in
                s.result.outcome == .retry && s.claimed.attempt >= policy.tries ? "failed" : s.result.outcome.rawValue
            }
            try await conn.query("""
                INSERT INTO attempts (delivery_id, attempt, provider, status, outcome, latency_ms, error)
                SELECT d, a, p, s, o, l, NULLIF(e, '') FROM unnest(\(results.map(\.claimed.target.deliveryId))::bigint[], \(results.map { Int32($0.claimed.attempt) })::int[],
                    \(results.map(\.claimed.target.provider))::text[], \(results.map { Int32($0.result.status) })::int[], \(outcomes)::text[],
                    \(results.map(\.latencyMs))::float8[], \(results.map { $0.result.reason ?? "" })::text[])
                    AS x(d, a, p, s, o, l, e)
                """, logger: logger)
            let sent = results.filter { $0.result.outcome == .sent }.map(\.claimed.target.deliveryId)
            if !sent.isEmpty {
                try await conn.query("""
                    UPDATE deliveries SET state = 'sent', finished_at = now(), last_error = NULL WHERE id = ANY(\(sent)::bigint[])
                    """, logger: logger)
            }
            for s in results where s.result.outcome != .sent {
                try await settle(s.claimed, s.result, on: conn)
            }
        }
        for s in results where s.result.outcome != .sent { log(s.claimed, s.result) }
    }

    /// The state of a delivery that was not sent: retried later, failed, or its token removed.
    func settle(_ c: Claimed, _ r: PushResult, on conn: PostgresConnection) async throws {
        var outcome = r.outcome
        if outcome == .retry, c.attempt >= policy.tries { outcome = .failed }
        let id = c.target.deliveryId
        switch outcome {
        case .sent:
            try await conn.query("UPDATE deliveries SET state = 'sent', finished_at = now(), last_error = NULL WHERE id = \(id)", logger: logger)
        case .retry:
            let wait = policy.delay(after: c.attempt, retryAfter: r.retryAfter)
            try await conn.query("""
                UPDATE deliveries SET next_attempt_at = now() + make_interval(secs => \(wait)), last_error = \(r.reason) WHERE id = \(id)
                """, logger: logger)
        case .failed:
            try await conn.query("""
                UPDATE deliveries SET state = 'failed', finished_at = now(), last_error = \(r.reason) WHERE id = \(id)
                """, logger: logger)
        case .unregistered:
            // The token is dead: forget it and everything still queued for it.
            try await conn.query("""
                UPDATE deliveries SET state = 'unregistered', finished_at = now(), last_error = \(r.reason)
                WHERE id = \(id) OR (state = 'pending' AND user_id = \(c.target.userId) AND device_id = \(c.target.deviceId)
                                     AND token IS NOT DISTINCT FROM \(c.target.token) AND webhook_url IS NOT DISTINCT FROM \(c.target.webhookUrl))
                """, logger: logger)
            try await conn.query("""
                DELETE FROM devices WHERE user_id = \(c.target.userId) AND device_id = \(c.target.deviceId)
                    AND token IS NOT DISTINCT FROM \(c.target.token) AND webhook_url IS NOT DISTINCT FROM \(c.target.webhookUrl)
                """, logger: logger)
        }
    }

    func log(_ c: Claimed, _ r: PushResult) {
        let id = c.target.deliveryId
        switch r.outcome == .retry && c.attempt >= policy.tries ? .failed : r.outcome {
        case .failed:
            logger.warning("push not delivered", metadata: [
                "delivery": "\(id)", "provider": "\(c.target.provider)", "status": "\(r.status)", "reason": "\(r.reason ?? "-")",
                "attempt": "\(c.attempt)"])
        case .unregistered:
            logger.notice("push token unregistered; removed", metadata: [
                "user": "\(c.target.userId)", "device": "\(c.target.deviceId)", "reason": "\(r.reason ?? "-")"])
        case .retry:
            logger.info("push will be retried", metadata: ["delivery": "\(id)", "status": "\(r.status)", "attempt": "\(c.attempt)"])
        case .sent:
            break
        }
    }

    func finish(_ id: Int64, state: String, error: String) async throws {
        try await database.query("UPDATE deliveries SET state = \(state), finished_at = now(), last_error = \(error) WHERE id = \(id)")
    }
}
