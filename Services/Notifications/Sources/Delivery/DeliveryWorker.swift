import Contracts
import Foundation
import Logging
import Messaging
import NotificationsCore
import Outbox
import Persistence
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Sends queued deliveries: claims due rows (`FOR UPDATE SKIP LOCKED`, so replicas share the
/// work), hands each to its provider, and records the attempt and the outcome. A claimed row is
/// leased for a minute by moving its `next_attempt_at`: a worker that dies mid-send leaves it to
/// be tried again, never lost. Claiming, sending and recording overlap (a pipeline), so sends
/// never wait for the database. Graceful shutdown finishes the sends in flight and records them.
///
/// Sends hold slots of ``SendLanes``: APNs and FCM one lane (`concurrency`), webhooks another,
/// capped per account and per destination. A webhook whose lane, account or destination is full
/// is put back for ``deferFor`` (its attempt not counted) instead of waiting, so slow receivers
/// of one account delay only that account's webhooks. Every send ends within its provider's
/// deadline (webhooks: `CHRONIR_WEBHOOK_DEADLINE`, at most 30 s), well inside the 60 s lease:
/// no row is claimed again while a send of it is still open.
final class DeliveryWorker: Service, Sendable {
    private let store: NotificationStore
    private let providers: [String: any PushProvider]
    private let policy: RetryPolicy
    private let telemetry: Telemetry
    private let logger: Logger
    private let poll: Duration
    private let limits: SendLanes.Limits
    /// How long a webhook put back by ``SendLanes`` waits before it is claimed again.
    private let deferFor: Duration
    /// The longest one send may take (its provider's deadline and the lookups before it): a
    /// row starts a send only while that still ends inside its lease (``DeliveryLease``).
    private let sendBound: Duration
    private let signal = WakeSignal()
    /// Set by shutdown: claim nothing more, finish and record what is claimed.
    private let stopping = Atomic<Bool>(false)
    /// The instants queued pushes wait for, in Unix milliseconds, ascending (at most
    /// ``maxInstants``; beyond, the latest are left to the poll): the wait ends at the first
    /// rather than at the next poll.
    private let instants = Mutex<[Int64]>([])
    private let maxInstants = 4_096
    /// Deliveries claimed at a time; the next claim starts when fewer than `concurrency` are
    /// left to send.
    private var batchSize: Int { max(limits.providers * 2, 128) }
    /// The most webhooks waiting in this worker for a slot (``SendLanes``); more go back to the
    /// table for ``deferFor``.
    private var maxParked: Int { max(batchSize * 4, 512) }

    init(store: NotificationStore, providers: [String: any PushProvider], policy: RetryPolicy, telemetry: Telemetry, logger: Logger,
         poll: Duration, limits: SendLanes.Limits, deferFor: Duration = .seconds(1), sendBound: Duration = .seconds(20)) {
        self.store = store
        self.providers = providers
        self.policy = policy
        self.telemetry = telemetry
        self.logger = logger
        self.poll = poll
        self.limits = limits
        self.deferFor = deferFor
        self.sendBound = sendBound
    }

    /// The lane a claimed delivery's send takes.
    static func lane(of c: Claimed) -> SendLanes.Lane {
        guard c.target.provider == PushProviderKind.webhook.rawValue else { return .provider }
        let host = c.target.webhookUrl.flatMap(URL.init(string:)).flatMap { $0.host?.lowercased() } ?? ""
        return .webhook(account: c.target.userId, destination: host)
    }

    /// New deliveries were queued.
    func wake() { signal.signal() }

    /// Deliveries were queued for these instants: look for them then (the poll would find them
    /// up to one poll interval later). Called after the transaction that queued them commits.
    func wake(at dates: [Date]) {
        guard !dates.isEmpty else { return }
        let earlier = instants.withLock { list -> Bool in
            let before = list.first
            for d in dates {
                let ms = Int64((d.timeIntervalSince1970 * 1000).rounded(.up))
                var lo = 0, hi = list.count
                while lo < hi { let mid = (lo + hi) / 2; if list[mid] < ms { lo = mid + 1 } else { hi = mid } }
                if lo < list.count, list[lo] == ms { continue }
                list.insert(ms, at: lo)
            }
            if list.count > maxInstants { list.removeLast(list.count - maxInstants) }
            return list.first != before
        }
        if earlier { signal.signal() }
    }

    /// How long until the earliest known instant (at most one poll); zero once it has come, and
    /// the instants passed are then forgotten (the claim that follows finds what waited for them).
    private func untilInstant() -> Duration {
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        return instants.withLock { list in
            guard let first = list.first else { return poll }
            if first <= now {
                list.removeFirst(list.prefix { $0 <= now }.count)
                return .zero
            }
            return min(poll, .milliseconds(first - now))
        }
    }

    struct Claimed: Sendable {
        var target: PushTarget
        var content: PushContent
        var attempt: Int
        /// When this worker claimed it (its lease runs from about then).
        var claimedAt = ContinuousClock.now
    }

    /// A claimed row's lease (``NotificationStore/claimDueDeliveries(limit:)`` moves its next
    /// attempt this far ahead).
    static let lease = Duration.seconds(NotificationStore.leaseSeconds)

    func run() async throws {
        // The pipeline runs in a task of its own, which shutdown does not cancel: sends in flight
        // finish and are recorded; `stopping` only ends the claiming.
        let pipeline = Task { [self] in await self.pipeline() }
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await pipeline.value
            } onGracefulShutdown: {
                self.stopping.store(true, ordering: .relaxed)
                self.signal.signal()
            }
        } onCancel: {
            self.stopping.store(true, ordering: .relaxed)
            self.signal.signal()
        }
    }

    /// What a step of the pipeline finished.
    private enum Step: Sendable {
        case sent(Sent)
        case claimed([Claimed])
        case recorded
        /// A wake, the poll or a queued instant while sends were in flight.
        case woke
    }

    /// Keeps `concurrency` sends in flight: claims the next due rows while sends are out,
    /// records what finished while others are still sending (one transaction at a time, each
    /// taking everything finished since the last), and sleeps only when nothing is due, in
    /// flight or left to record. Returns once shutdown set `stopping` and everything claimed
    /// is recorded.
    private func pipeline() async {
        await withTaskGroup(of: Step.self) { group in
            var backlog = DeliveryBacklog<Claimed>(lanes: SendLanes(limits: limits), maxParked: maxParked) { Self.lane(of: $0) }
            var claiming = false
            var recording = false
            var exhausted = false
            // A wake that came while a claim was out: that claim may have missed the new rows.
            var wokenWhileClaiming = false
            var finished: [Sent] = []
            // A task waiting for a wake, the poll or an instant while sends are in flight: a
            // send may take up to its deadline, and the loop must not wait that long to claim.
            var ticking = false
            while true {
                // A wake, or the instant pushes were queued for has come (also while sends are
                // in flight): claim again.
                if signal.take() || (exhausted && untilInstant() == .zero) {
                    exhausted = false
                    if claiming { wokenWhileClaiming = true }
                }
                let stop = stopping.load(ordering: .relaxed)
                let (send, putBack) = backlog.release(stopping: stop) {
                    DeliveryLease.maySend(age: ContinuousClock.now - $0.claimedAt, lease: Self.lease, sendBound: self.sendBound)
                }
                for c in send { group.addTask { .sent(await self.deliver(c)) } }
                for reason in putBack { telemetry.counter("chronir_push_deferred_total", [("reason", reason)]).increment() }
                if !claiming, !stop, !exhausted, backlog.waiting < limits.providers {
                    claiming = true
                    startClaim(in: &group)
                }
                if !recording, !finished.isEmpty || !backlog.deferred.isEmpty {
                    recording = true
                    startRecording(finished, deferred: backlog.takeDeferred().map { ($0.target.deliveryId, Int32($0.attempt)) }, in: &group)
                    finished.removeAll(keepingCapacity: true)
                }
                if !ticking, !stop, exhausted, backlog.lanes.inFlight > 0 {
                    ticking = true
                    group.addTask {
                        let wait = self.untilInstant()
                        if wait > .zero { await self.signal.wait(timeout: wait) }
                        return .woke
                    }
                }
                guard let step = await group.next() else {
                    // Nothing claimed, in flight or to record.
                    if stop { return }
                    let wait = untilInstant()
                    if wait > .zero { await signal.wait(timeout: wait) }
                    exhausted = false
                    continue
                }
                switch step {
                case .sent(let s):
                    backlog.finished(s.claimed)
                    finished.append(s)
                case .claimed(let rows):
                    claiming = false
                    exhausted = rows.count < batchSize && !wokenWhileClaiming
                    wokenWhileClaiming = false
                    backlog.enqueue(rows)
                case .recorded:
                    recording = false
                case .woke:
                    ticking = false
                    exhausted = false
                }
            }
        }
    }

    /// Claims the next due rows in a task of `group` (an error: none, after a second).
    private func startClaim(in group: inout TaskGroup<Step>) {
        let limit = batchSize
        group.addTask {
            do {
                return .claimed(try await self.claim(limit: limit))
            } catch {
                self.logger.error("delivery claim: \(error)")
                try? await Task.sleep(for: .seconds(1))
                return .claimed([])
            }
        }
    }

    /// Records `round` and puts `deferred` back, in a task of `group`.
    private func startRecording(_ round: [Sent], deferred putBack: [(id: Int64, attempt: Int32)], in group: inout TaskGroup<Step>) {
        group.addTask {
            do {
                try await self.record(round, deferred: putBack)
            } catch {
                // The rows stay leased: they are tried again when the lease ends.
                self.logger.error("delivery record: \(error)")
                try? await Task.sleep(for: .seconds(1))
            }
            return .recorded
        }
    }

    /// Claims up to `limit` due deliveries; one whose content does not decode is finished as failed.
    func claim(limit: Int) async throws -> [Claimed] {
        var out: [Claimed] = []
        // Before the query: the lease runs from the claim's commit, which comes after this.
        let claimedAt = ContinuousClock.now
        for row in try await store.claimDueDeliveries(limit: limit) {
            do {
                let c = try JSONCoding.decoder().decode(PushContent.self, from: Data(row.content.utf8))
                out.append(Claimed(target: row.target, content: c, attempt: Int(row.attempts), claimedAt: claimedAt))
            } catch {
                try await store.finishDelivery(row.target.deliveryId, state: "failed", error: "undecodable content: \(error)")
            }
        }
        return out
    }

    struct Sent: Sendable {
        var claimed: Claimed
        var result: PushResult
        var latencyMs: Double
    }

    func deliver(_ c: Claimed) async -> Sent {
        let started = ContinuousClock.now
        let result: PushResult
        if let provider = providers[c.target.provider] {
            // The whole send — FCM's token fetch included — within the bound the lease rule
            // counts on (``DeliveryLease``).
            result = await ProviderHTTP.bounded(sendBound) { await provider.send(c.content, to: c.target) }
        } else {
            result = PushResult(status: 0, outcome: .failed, reason: "provider \(c.target.provider) is not configured")
        }
        let elapsed = ContinuousClock.now - started
        let ms = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        telemetry.counter("chronir_push_attempts_total", [("provider", c.target.provider), ("outcome", result.outcome.rawValue)]).increment()
        telemetry.timer("chronir_push_latency_seconds", [("provider", c.target.provider)]).recordNanoseconds(Int64(ms * 1e6))
        return Sent(claimed: c, result: result, latencyMs: ms)
    }

    /// Records a round: every attempt and every successful delivery in bulk, the rest one by one;
    /// the `deferred` deliveries go back to wait ``deferFor``, their attempt not counted.
    func record(_ results: [Sent], deferred: [(id: Int64, attempt: Int32)] = []) async throws {
        guard !results.isEmpty || !deferred.isEmpty else { return }
        try await store.database.transaction { conn in
            if !deferred.isEmpty {
                try await self.store.putBack(ids: deferred.map(\.id), attempts: deferred.map(\.attempt), forSeconds: Double(self.deferFor.components.seconds) + Double(self.deferFor.components.attoseconds) / 1e18,
                                        on: conn, logger: self.logger)
            }
            guard !results.isEmpty else { return }
            let outcomes = results.map { s -> String in
                s.result.outcome == .retry && s.claimed.attempt >= self.policy.tries ? "failed" : s.result.outcome.rawValue
            }
            try await self.store.insertAttempts(deliveryIds: results.map(\.claimed.target.deliveryId), attempts: results.map { Int32($0.claimed.attempt) },
                                           providers: results.map(\.claimed.target.provider), statuses: results.map { Int32($0.result.status) },
                                           outcomes: outcomes, latenciesMs: results.map(\.latencyMs), errors: results.map { $0.result.reason ?? "" },
                                           on: conn, logger: self.logger)
            let sent = results.filter { $0.result.outcome == .sent }.map(\.claimed.target.deliveryId)
            if !sent.isEmpty {
                try await self.store.markSent(ids: sent, on: conn, logger: self.logger)
            }
            for s in results where s.result.outcome != .sent {
                try await self.settle(s.claimed, s.result, on: conn)
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
            try await store.markSent(id: id, on: conn, logger: logger)
        case .retry:
            let wait = policy.delay(after: c.attempt, retryAfter: r.retryAfter)
            try await store.scheduleRetry(id, afterSeconds: wait, reason: r.reason, on: conn, logger: logger)
        case .failed:
            try await store.markFailed(id, reason: r.reason, on: conn, logger: logger)
        case .unregistered:
            // The token is dead: forget it and everything still queued for it.
            try await store.markUnregistered(c.target, reason: r.reason, on: conn, logger: logger)
            try await store.deleteUnregisteredDevice(c.target, on: conn, logger: logger)
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
}
