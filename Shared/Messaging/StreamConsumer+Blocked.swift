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
