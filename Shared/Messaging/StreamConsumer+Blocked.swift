import Foundation
import Logging

extension StreamConsumer {
    /// Waits at an event this build cannot handle until the stored checkpoint passes it: another
    /// replica (already upgraded) applied it, or an operator skipped it (``skip(seq:reason:)``).
    /// Live events arriving meanwhile are dropped and replayed afterwards.
    func waitWhileBlocked(_ stop: ConsumerBlocked, _ cp: inout Int64) async throws {
        cp = max(cp, stop.seq - 1)
        storeApplied(cp)
        let since = ContinuousClock.now
        setBlocked(BlockedConsumer(stream: stream, seq: stop.seq, type: stop.type, version: stop.version,
                                   reason: stop.reason, since: Date()))
        telemetry.gauge("chronir_consumer_blocked", [("stream", stream)]).record(1)
        telemetry.logger.error("consumer stopped at an event this build cannot handle; upgrade this service, or skip the event with `chronirctl consumer skip`",
                               metadata: ["stream": "\(stream)", "seq": "\(stop.seq)", "type": "\(stop.type)",
                                          "version": "\(stop.version)", "reason": "\(stop.reason)"])
        defer {
            setBlocked(nil)
            telemetry.gauge("chronir_consumer_blocked", [("stream", stream)]).record(0)
        }
        while true {
            try await Task.sleep(for: blockedPoll)
            if isStopped { throw CancellationError() }
            dropLiveInputs()
            guard let current = try? await applier.checkpoint(stream: stream), current >= stop.seq else { continue }
            cp = max(cp, current)
            storeApplied(cp)
            telemetry.logger.notice("consumer running again: the event it stopped at was applied or skipped",
                                    metadata: ["stream": "\(stream)", "seq": "\(stop.seq)", "checkpoint": "\(current)",
                                               "blockedSeconds": "\(since.duration(to: .now).components.seconds)"])
            return
        }
    }

    /// Stops at a stream that went back: the producer's head (`head`, read by a replay) is behind
    /// this consumer's checkpoint, so its database was restored, failed over to a standby that
    /// had not received everything, or lost commits. The numbers after `head` will be given to
    /// new events, which the consumer would drop as duplicates of those it applied: it applies
    /// nothing more from the stream (`chronir_consumer_rewound` 1, alert ChronirStreamRewound)
    /// until its stored checkpoint is changed (docs/operations.md#chronirstreamrewound), and
    /// goes on from the value set.
    func waitWhileRewound(head: Int64, _ cp: inout Int64) async throws {
        let at = cp
        telemetry.counter("chronir_consumer_stream_rewinds_total", [("stream", stream)]).increment()
        if applier.followsRewinds {
            telemetry.logger.warning("the producer's stream went back behind this consumer; following it from its head",
                                     metadata: ["stream": "\(stream)", "head": "\(head)", "checkpoint": "\(at)"])
            cp = head
            storeApplied(cp)
            resetHead(head)
            return
        }
        // What is stored now (it may trail `at` when skips were kept in memory): a change from it
        // is the operator's decision.
        let baseline = (try? await applier.checkpoint(stream: stream)) ?? at
        let since = ContinuousClock.now
        setBlocked(BlockedConsumer(stream: stream, seq: at + 1, type: "stream-rewound", version: 0,
                                   reason: "the producer's head \(head) is behind this consumer's checkpoint \(at)", since: Date()))
        telemetry.gauge("chronir_consumer_rewound", [("stream", stream)]).record(1)
        telemetry.logger.critical("the producer's stream went back behind this consumer; stopped so that new events are not dropped as duplicates; set the checkpoint to go on (docs/operations.md#chronirstreamrewound)",
                                  metadata: ["stream": "\(stream)", "head": "\(head)", "checkpoint": "\(at)"])
        defer {
            setBlocked(nil)
            telemetry.gauge("chronir_consumer_rewound", [("stream", stream)]).record(0)
        }
        while true {
            try await Task.sleep(for: blockedPoll)
            if isStopped { throw CancellationError() }
            dropLiveInputs()
            guard let stored = try? await applier.checkpoint(stream: stream), stored != baseline else { continue }
            applier.forgetUnwritten(stream: stream)
            cp = stored
            storeApplied(cp)
            resetHead(head)
            telemetry.logger.notice("consumer running again: its checkpoint was set after the stream went back",
                                    metadata: ["stream": "\(stream)", "checkpoint": "\(stored)", "head": "\(head)",
                                               "stoppedSeconds": "\(since.duration(to: .now).components.seconds)"])
            return
        }
    }

    /// Skips the event this consumer is stopped at (or would apply next): the event, fetched
    /// from the producer, is recorded as a dead letter with `reason` (so `dead-letters replay`
    /// can apply it after an upgrade) and the checkpoint moves past it. Throws
    /// ``ServiceError`` when `seq` is not the next event of this consumer.
    public func skip(seq: Int64, reason: String) async throws {
        let current = try await applier.checkpoint(stream: stream)
        guard seq == current + 1 else {
            throw ServiceError(.validationFailed, "the \(stream) consumer's checkpoint is \(current): only event \(current + 1) can be skipped, not \(seq)")
        }
        let batch = try await replaySource.replay(stream: stream, after: seq - 1, limit: 1)
        guard let record = batch.events.first, record.seq == seq else {
            throw ServiceError(.notFound, "event \(seq) of the \(stream) stream is no longer kept by its producer (head \(batch.head))")
        }
        let type = (try? Envelope.decode(Data(record.envelope.utf8)))?.type
        do {
            try await applier.deadLetter(stream: stream, seq: seq, type: type, raw: record.envelope, reason: "skipped by an operator: \(reason)")
        } catch let moved as CheckpointMoved {
            throw ServiceError(.validationFailed, "the \(stream) consumer's checkpoint moved to \(moved.current) meanwhile; nothing skipped")
        }
        telemetry.logger.notice("event skipped by an operator", metadata: ["stream": "\(stream)", "seq": "\(seq)",
                                                                            "type": "\(type ?? "?")", "reason": "\(reason)"])
    }
}
