import Foundation
import Logging
import StreamCore
import Synchronization

/// An event as a consumer receives it.
public struct DeliveredEvent: Sendable {
    /// Its position in the stream.
    public var seq: Int64
    /// The decoded envelope.
    public var envelope: Envelope

    public init(seq: Int64, envelope: Envelope) {
        self.seq = seq
        self.envelope = envelope
    }
}

/// Applies events durably: the consumer's effects and its checkpoint in one transaction.
public protocol EventApplier: Sendable {
    /// The last sequence number applied for `stream` (0 when none).
    func checkpoint(stream: String) async throws -> Int64
    /// Applies consecutive events (the first is checkpoint + 1) and advances the checkpoint
    /// to the last one, atomically. Throw ``ServiceError`` (or a decoding error) for an event
    /// that can never be applied; any other error is treated as transient and retried.
    func apply(stream: String, events: [DeliveredEvent]) async throws
    /// Records an event that cannot be applied, with the reason, and advances past it.
    func deadLetter(stream: String, seq: Int64, type: String?, raw: String, reason: String) async throws
    /// Advances the checkpoint to `seq` without applying (events lost past retention).
    func skip(stream: String, to seq: Int64, reason: String) async throws
    /// Called when the consumer has nothing more to apply for now (each producer heartbeat
    /// ends such a pause): an applier that advanced its checkpoint in memory only may write it.
    func settle(stream: String) async throws
    /// Whether the consumer follows a producer whose stream went back (its head behind the
    /// checkpoint) from the new head on, rather than stopping: for appliers that keep nothing
    /// of the stream but the moment (the gateway's live streams). Default false: durable
    /// effects of the lost history need a decision (``StreamConsumer`` stops and alerts).
    var followsRewinds: Bool { get }
    /// Forgets what the applier keeps in memory of `stream` past its stored checkpoint (skips
    /// not written yet): called when the consumer takes a stored checkpoint lower than its own
    /// (a rewind set by an operator, a restored database), which that memory must not overwrite.
    func forgetUnwritten(stream: String)
}

extension EventApplier {
    public func settle(stream: String) async throws {}
    public var followsRewinds: Bool { false }
    public func forgetUnwritten(stream: String) {}
}

/// Thrown by an applier when a handler failed in a way that retrying will not change (the
/// database refused what it wrote: a constraint, invalid data, a statement that cannot run). The
/// consumer retries it a few times (``StreamConsumer``'s `poisonAttempts`), then records the
/// event as a dead letter; errors of any other kind are retried without end (an outage passes).
public struct HandlerFailed: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Thrown by an applier when another process advanced the checkpoint first (replicas
/// consuming the same stream into a shared schema): those events were applied there.
public struct CheckpointMoved: Error {
    public let current: Int64
    public init(current: Int64) {
        self.current = current
    }
}

/// Where a consumer fetches events it missed.
public protocol EventReplaySource: Sendable {
    func replay(stream: String, after: Int64, limit: Int) async throws -> EventBatch
}

/// Replays through the producer's `events.replay` request.
public struct RPCReplaySource: EventReplaySource {
    let client: RPCClient
    let timeout: Duration

    /// `timeout` bounds one replay request: one sent to a replica that died with it in flight
    /// is retried (on a live replica) after this long.
    public init(client: RPCClient, timeout: Duration = .seconds(5)) {
        self.client = client
        self.timeout = timeout
    }

    public func replay(stream: String, after: Int64, limit: Int) async throws -> EventBatch {
        try await client.call(EventMethods.Replay.self, .init(stream: stream, after: after, limit: limit, maxBytes: client.frameLimit),
                              timeout: timeout)
    }
}

/// Consumes one event stream exactly once and in order (the ZeroMQ guide's Clone pattern).
///
/// Live events and heartbeats arrive through ``deliver(seq:envelope:)`` and
/// ``observeHead(_:)`` (from a SUB socket or `events.push` messages). An event at
/// checkpoint + 1 is applied; an older one is a duplicate and dropped; a newer one, or a
/// heartbeat ahead of the checkpoint, means something was missed, and the consumer replays
/// from the producer until it has caught up. It also replays at start, so a consumer that was
/// down catches up completely. Live events that pile up are applied in one transaction.
public final class StreamConsumer: Sendable {
    /// The stream consumed.
    public let stream: String
    let applier: any EventApplier
    let replaySource: any EventReplaySource
    let telemetry: Telemetry
    private let inbox = AsyncInbox<Input>()
    private let applied = Atomic<Int64>(-1)
    private let stopped = Atomic<Bool>(false)
    private let headSeen = Atomic<Int64>(0)
    private let batchLimit: Int
    let blockedPoll: Duration
    /// The event the consumer stopped at, while it waits (nil when running).
    private let blockedAt = Mutex<BlockedConsumer?>(nil)
    /// Live events were dropped while blocked: replay once running again.
    private let droppedWhileBlocked = Atomic<Bool>(false)

    enum Input: Sendable {
        case event(Int64, Data)
        case head(Int64)
        /// Nothing arrived for ``silence``: ask the producer.
        case silent
    }

    /// How long the consumer waits for an event or a heartbeat (relays send one a second) before
    /// it asks the producer for what it missed (`CHRONIR_CONSUMER_SILENCE`, default 10 s; nil
    /// never): a link that drops everything without closing (a black hole, a lost subscription)
    /// would otherwise leave the consumer behind with its lag reading 0, since only what
    /// arrives shows it the head.
    let silence: Duration?
    /// When something last arrived (monotonic milliseconds).
    private let lastHeard = Atomic<Int64>(monotonicMilliseconds())

    /// How many times an event whose handler fails deterministically (``HandlerFailed``) is
    /// tried before it is recorded as a dead letter (`CHRONIR_POISON_ATTEMPTS`).
    let poisonAttempts: Int

    public init(stream: String, applier: any EventApplier, replaySource: any EventReplaySource,
                telemetry: Telemetry, batchLimit: Int = 500, blockedPoll: Duration = .seconds(1), poisonAttempts: Int = 10,
                silence: Duration? = .seconds(10)) {
        self.poisonAttempts = max(1, poisonAttempts)
        self.silence = silence
        self.stream = stream
        self.applier = applier
        self.replaySource = replaySource
        self.telemetry = telemetry
        self.batchLimit = batchLimit
        self.blockedPoll = blockedPoll
        telemetry.gauge("chronir_consumer_blocked", [("stream", stream)]).record(0)
        telemetry.gauge("chronir_consumer_rewound", [("stream", stream)]).record(0)
    }

    /// The event this consumer stopped at because this build cannot handle it (nil: running).
    public var blocked: BlockedConsumer? { blockedAt.withLock { $0 } }

    /// Hands over a live event.
    public func deliver(seq: Int64, envelope: Data) {
        lastHeard.store(monotonicMilliseconds(), ordering: .relaxed)
        inbox.send(.event(seq, envelope))
    }

    /// Hands over the producer's head (from a heartbeat).
    public func observeHead(_ head: Int64) {
        lastHeard.store(monotonicMilliseconds(), ordering: .relaxed)
        inbox.send(.head(head))
    }

    /// The last applied sequence number (-1 before start).
    public var checkpoint: Int64 { applied.load(ordering: .relaxed) }

    /// The highest head seen from the producer.
    public var head: Int64 { headSeen.load(ordering: .relaxed) }

    /// Stops ``run()`` after what it is doing now.
    public func stop() {
        stopped.store(true, ordering: .relaxed)
        inbox.finish()
    }

    /// Catches up, then applies live events until ``stop()`` or cancellation.
    public func run() async {
        var cp: Int64
        do {
            cp = try await retrying("read checkpoint") { try await self.applier.checkpoint(stream: self.stream) }
        } catch {
            return
        }
        applied.store(cp, ordering: .relaxed)
        telemetry.logger.info("consuming stream", metadata: ["stream": "\(stream)", "checkpoint": "\(cp)"])
        let watchdog = silence.map { silence in Task { await self.watchSilence(silence) } }
        defer { watchdog?.cancel() }
        do {
            try await catchUp(&cp)
            while let first = await inbox.next() {
                try Task.checkCancellation()
                if stopped.load(ordering: .relaxed) { break }
                var pending: [DeliveredEvent] = []
                var needCatchUp = false
                var headBehind = false
                for input in [first] + inbox.takeAvailable(max: batchLimit) {
                    switch input {
                    case .head(let h):
                        noteHead(h)
                        // Behind what was applied: a rewound producer, or an old heartbeat of
                        // another replica overtaken by newer events. Asked below.
                        let beat = ConsumerRules.heartbeat(head: h, checkpoint: cp, pending: pending.count)
                        if beat.catchUp { needCatchUp = true }
                        if beat.behind { headBehind = true }
                    case .event(let seq, let data):
                        noteHead(seq)
                        switch ConsumerRules.arrival(seq: seq, checkpoint: cp, pending: pending.count) {
                        case .duplicate:
                            telemetry.counter("chronir_events_duplicates_total", [("stream", stream)]).increment()
                        case .next:
                            if let envelope = decode(seq: seq, data: data) {
                                pending.append(DeliveredEvent(seq: seq, envelope: envelope))
                            } else {
                                try await flush(&pending, &cp)
                                try await deadLetter(seq: seq, raw: data, reason: "undecodable envelope", &cp)
                            }
                        case .gap:
                            telemetry.counter("chronir_events_gaps_total", [("stream", stream)]).increment()
                            needCatchUp = true
                        }
                    case .silent:
                        telemetry.counter("chronir_consumer_silences_total", [("stream", stream)]).increment()
                        telemetry.logger.warning("nothing from the producer (no event, no heartbeat); asking it for what was missed",
                                                 metadata: ["stream": "\(stream)", "checkpoint": "\(cp)",
                                                            "silentSeconds": "\(silence?.components.seconds ?? 0)"])
                        needCatchUp = true
                    }
                }
                try await flush(&pending, &cp)
                if headBehind { try await checkRewound(&cp) }
                if droppedWhileBlocked.exchange(false, ordering: .relaxed) { needCatchUp = true }
                if needCatchUp { try await catchUp(&cp) }
                if inbox.count == 0 { await settle() }
            }
        } catch {
            telemetry.logger.info("stream consumer stopped", metadata: ["stream": "\(stream)", "checkpoint": "\(cp)"])
        }
    }

    // MARK: - Internals

    var isStopped: Bool { stopped.load(ordering: .relaxed) }

    /// Sends ``Input/silent`` each time nothing arrived for `silence` (and not again until
    /// another `silence` passed, heard or not).
    private func watchSilence(_ silence: Duration) async {
        let limit = Int64(silence.components.seconds) * 1000 + silence.components.attoseconds / 1_000_000_000_000_000
        while !Task.isCancelled, !isStopped {
            let quiet = monotonicMilliseconds() - lastHeard.load(ordering: .relaxed)
            if quiet >= limit {
                lastHeard.store(monotonicMilliseconds(), ordering: .relaxed)
                inbox.send(.silent)
                try? await Task.sleep(for: silence)
            } else {
                try? await Task.sleep(for: .milliseconds(max(10, limit - quiet)))
            }
        }
    }

    func storeApplied(_ cp: Int64) { applied.store(cp, ordering: .relaxed) }

    func setBlocked(_ b: BlockedConsumer?) { blockedAt.withLock { $0 = b } }

    /// Drops what arrived live (noting the producer's head): it is replayed once running again.
    func dropLiveInputs() {
        let inputs = inbox.takeAvailable(max: Int.max)
        guard !inputs.isEmpty else { return }
        for input in inputs {
            switch input {
            case .head(let h): noteHead(h)
            case .event(let seq, _): noteHead(seq)
            case .silent: break
            }
        }
        droppedWhileBlocked.store(true, ordering: .relaxed)
    }

    /// Forgets the heads seen (after a rewound producer: the old ones are of a lost history).
    func resetHead(_ h: Int64) {
        headSeen.store(h, ordering: .relaxed)
        telemetry.gauge("chronir_events_lag", [("stream", stream)]).record(max(0, h - checkpoint))
    }

    /// Asks the producer for its head; behind `cp`, the stream was rewound (``waitWhileRewound(head:_:)``).
    private func checkRewound(_ cp: inout Int64) async throws {
        let after = cp
        let batch = try await retrying("replay") { try await self.replaySource.replay(stream: self.stream, after: after, limit: 1) }
        if batch.head < cp { try await waitWhileRewound(head: batch.head, &cp) }
    }

    private func noteHead(_ h: Int64) {
        var current = headSeen.load(ordering: .relaxed)
        while h > current {
            let (exchanged, original) = headSeen.compareExchange(expected: current, desired: h, ordering: .relaxed)
            if exchanged { break }
            current = original
        }
        telemetry.gauge("chronir_events_lag", [("stream", stream)]).record(max(0, head - checkpoint))
    }

    private func decode(seq: Int64, data: Data) -> Envelope? {
        do {
            return try Envelope.decode(data)
        } catch {
            telemetry.logger.error("undecodable event", metadata: ["stream": "\(stream)", "seq": "\(seq)", "error": "\(error)"])
            return nil
        }
    }

    private func catchUp(_ cp: inout Int64) async throws {
        telemetry.counter("chronir_events_replays_total", [("stream", stream)]).increment()
        while true {
            let after = cp
            let batch = try await retrying("replay") {
                try await self.replaySource.replay(stream: self.stream, after: after, limit: self.batchLimit)
            }
            noteHead(batch.head)
            if batch.head < cp {
                try await waitWhileRewound(head: batch.head, &cp)
                continue
            }
            if let to = ConsumerRules.retentionSkip(checkpoint: cp, firstAvailable: batch.firstAvailable,
                                                    firstEvent: batch.events.first?.seq, head: batch.head) {
                telemetry.logger.error("events lost past the producer's retention; skipping",
                                       metadata: ["stream": "\(stream)", "from": "\(cp + 1)", "to": "\(to)"])
                try await retrying("skip") { try await self.applier.skip(stream: self.stream, to: to, reason: "past retention") }
                cp = to
                applied.store(cp, ordering: .relaxed)
            }
            var pending: [DeliveredEvent] = []
            replay: for record in batch.events {
                switch ConsumerRules.arrival(seq: record.seq, checkpoint: cp, pending: pending.count) {
                case .duplicate: continue replay
                case .gap: break replay
                case .next: break
                }
                if let e = decode(seq: record.seq, data: Data(record.envelope.utf8)) {
                    pending.append(DeliveredEvent(seq: record.seq, envelope: e))
                } else {
                    try await flush(&pending, &cp)
                    try await deadLetter(seq: record.seq, raw: Data(record.envelope.utf8), reason: "undecodable envelope", &cp)
                }
            }
            try await flush(&pending, &cp)
            if ConsumerRules.replayDone(eventCount: batch.events.count, checkpoint: cp, head: batch.head) { return }
        }
    }

    /// Lets the applier write what it kept in memory; a failure is retried at the next pause.
    private func settle() async {
        do {
            try await applier.settle(stream: stream)
        } catch {
            telemetry.logger.debug("settling the checkpoint failed; retried later", metadata: ["stream": "\(stream)", "error": "\(error)"])
        }
    }

    private func flush(_ pending: inout [DeliveredEvent], _ cp: inout Int64) async throws {
        guard !pending.isEmpty else { return }
        let events = pending
        pending.removeAll()
        try await apply(events, &cp)
    }

    private func apply(_ events: [DeliveredEvent], _ cp: inout Int64) async throws {
        var attempts = ApplyAttempts(batchSize: events.count, poisonAttempts: poisonAttempts)
        while true {
            let step: ApplyAttempts.Step
            let reason: String
            do {
                try await applier.apply(stream: stream, events: events)
                cp = events.last!.seq
                applied.store(cp, ordering: .relaxed)
                telemetry.counter("chronir_events_applied_total", [("stream", stream)]).increment(by: events.count)
                return
            } catch let moved as CheckpointMoved {
                switch ConsumerRules.checkpointMoved(stored: moved.current, checkpoint: cp) {
                case .rewound(let to):
                    telemetry.logger.warning("the stored checkpoint went back; applying again from it",
                                             metadata: ["stream": "\(stream)", "checkpoint": "\(cp)", "stored": "\(to)"])
                    telemetry.counter("chronir_consumer_checkpoint_rewinds_total", [("stream", stream)]).increment()
                    applier.forgetUnwritten(stream: stream)
                    cp = to
                    applied.store(cp, ordering: .relaxed)
                    droppedWhileBlocked.store(true, ordering: .relaxed)
                case .ahead(let to):
                    cp = to
                    applied.store(cp, ordering: .relaxed)
                }
                return
            } catch let stop as ConsumerBlocked {
                try await waitWhileBlocked(stop, &cp)
                let rest = events.filter { $0.seq > cp }
                if !rest.isEmpty { try await apply(rest, &cp) }
                return
            } catch where Self.isPoison(error) {
                step = attempts.failed(.poison)
                reason = "\(error)"
            } catch let failed as HandlerFailed {
                // A handler that fails the same way each time (a constraint, a bug) would hold
                // every event behind it for ever: alone, and after `poisonAttempts` tries over
                // seconds, it becomes a dead letter (replayable once fixed) and the stream goes on.
                try Task.checkCancellation()
                step = attempts.failed(.handlerFailed)
                reason = "its handler failed \(attempts.handlerFailures) times: \(failed.message)"
                if step == .deadLetter { telemetry.counter("chronir_events_poisoned_total", [("stream", stream)]).increment() }
                if case .retry = step {
                    telemetry.logger.warning("an event's handler failed; retrying before it is dead-lettered",
                                             metadata: ["stream": "\(stream)", "seq": "\(events[0].seq)", "attempt": "\(attempts.handlerFailures)",
                                                        "of": "\(poisonAttempts)", "error": "\(failed.message)"])
                }
            } catch {
                try Task.checkCancellation()
                step = attempts.failed(.transient)
                reason = "\(error)"
                telemetry.logger.warning("applying events failed; retrying",
                                         metadata: ["stream": "\(stream)", "seq": "\(events[0].seq)", "error": "\(String(reflecting: error))"])
            }
            switch step {
            case .splitBatch:
                // Each event alone, except those a moved checkpoint or a dead letter already
                // passed (a poison batch used to try them again; a durable applier refused them
                // with CheckpointMoved, the live one sent them twice).
                for e in events where e.seq > cp { try await apply([e], &cp) }
                return
            case .deadLetter:
                let e = events[0]
                try await deadLetter(seq: e.seq, raw: e.envelope.encoded(), reason: reason, type: e.envelope.type, &cp)
                return
            case .retry(let delay):
                try await Task.sleep(for: delay)
            }
        }
    }

    private func deadLetter(seq: Int64, raw: Data, reason: String, type: String? = nil, _ cp: inout Int64) async throws {
        telemetry.counter("chronir_events_dead_lettered_total", [("stream", stream)]).increment()
        telemetry.logger.error("event cannot be applied; recorded as a dead letter",
                               metadata: ["stream": "\(stream)", "seq": "\(seq)", "type": "\(type ?? "?")", "reason": "\(reason)"])
        let text = String(decoding: raw, as: UTF8.self)
        do {
            try await retrying("dead-letter") {
                do {
                    try await self.applier.deadLetter(stream: self.stream, seq: seq, type: type, raw: text, reason: reason)
                } catch let moved as CheckpointMoved {
                    throw MovedBox(moved)
                }
            }
        } catch let box as MovedBox {
            cp = max(cp, box.moved.current)
            applied.store(cp, ordering: .relaxed)
            return
        }
        cp = seq
        applied.store(cp, ordering: .relaxed)
    }

    private struct MovedBox: Error { let moved: CheckpointMoved; init(_ m: CheckpointMoved) { moved = m } }

    static func isPoison(_ error: any Error) -> Bool {
        error is ServiceError || error is DecodingError || error is EnvelopeError
    }

    private func retrying<T: Sendable>(_ what: String, _ body: @Sendable () async throws -> T) async throws -> T {
        var delay = Duration.milliseconds(100)
        while true {
            do {
                return try await body()
            } catch let box as MovedBox {
                throw box
            } catch {
                try Task.checkCancellation()
                if stopped.load(ordering: .relaxed) { throw CancellationError() }
                telemetry.logger.warning("\(what) failed; retrying", metadata: ["stream": "\(stream)", "error": "\(error)"])
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
    }
}
