import StreamCore
import Testing

/// The stream consumer's decisions without a producer, a database or a clock: every arrival
/// against the checkpoint and what is pending, heartbeats, the retention skip, moved
/// checkpoints, and a batch's attempts through each kind of failure.
@Suite("Consumer rules (StreamCore)")
struct ConsumerRulesTests {
    @Test("an event against the checkpoint and what is pending", arguments: [
        (Int64(10), Int64(10), 0, ConsumerRules.Arrival.duplicate),
        (Int64(11), Int64(10), 0, .next),
        (Int64(12), Int64(10), 0, .gap),
        (Int64(11), Int64(10), 1, .duplicate),      // 11 already accepted, not yet applied
        (Int64(12), Int64(10), 1, .next),
        (Int64(14), Int64(10), 2, .gap),
        (Int64(1), Int64(0), 0, .next),
        (Int64(3), Int64(7), 0, .duplicate),
    ])
    func arrivals(seq: Int64, checkpoint: Int64, pending: Int, expected: ConsumerRules.Arrival) {
        #expect(ConsumerRules.arrival(seq: seq, checkpoint: checkpoint, pending: pending) == expected)
    }

    @Test("a heartbeat: ask when the head is past what was accepted; behind when below what was applied")
    func heartbeats() {
        #expect(ConsumerRules.heartbeat(head: 10, checkpoint: 10, pending: 0) == (false, false))
        #expect(ConsumerRules.heartbeat(head: 11, checkpoint: 10, pending: 0) == (true, false))
        #expect(ConsumerRules.heartbeat(head: 11, checkpoint: 10, pending: 1) == (false, false))
        #expect(ConsumerRules.heartbeat(head: 12, checkpoint: 10, pending: 1) == (true, false))
        #expect(ConsumerRules.heartbeat(head: 9, checkpoint: 10, pending: 0) == (false, true))
        #expect(ConsumerRules.heartbeat(head: 0, checkpoint: 10, pending: 3) == (false, true))
    }

    @Test("the retention skip: only when the next event is gone and the producer holds something later")
    func retention() {
        // The next one is there: nothing skipped.
        #expect(ConsumerRules.retentionSkip(checkpoint: 10, firstAvailable: 11, firstEvent: 11, head: 50) == nil)
        #expect(ConsumerRules.retentionSkip(checkpoint: 10, firstAvailable: 5, firstEvent: 11, head: 50) == nil)
        // 11…19 gone: skip to 19, the answer starts at 20.
        #expect(ConsumerRules.retentionSkip(checkpoint: 10, firstAvailable: 20, firstEvent: 20, head: 50) == 19)
        // Retention says 20, the answer starts later still (rows deleted meanwhile): skip to before the answer.
        #expect(ConsumerRules.retentionSkip(checkpoint: 10, firstAvailable: 20, firstEvent: 25, head: 50) == 24)
        // Retention past the checkpoint, but the answer does start at the next one: nothing skipped.
        #expect(ConsumerRules.retentionSkip(checkpoint: 10, firstAvailable: 20, firstEvent: 11, head: 50) == nil)
        // An empty answer: skip to before the oldest held when the head is past the checkpoint…
        #expect(ConsumerRules.retentionSkip(checkpoint: 10, firstAvailable: 20, firstEvent: nil, head: 30) == 19)
        // …and not when the producer holds nothing beyond it.
        #expect(ConsumerRules.retentionSkip(checkpoint: 10, firstAvailable: 20, firstEvent: nil, head: 10) == nil)
    }

    @Test("a replay ends on an empty answer or at the head")
    func replayDone() {
        #expect(ConsumerRules.replayDone(eventCount: 0, checkpoint: 3, head: 10))
        #expect(!ConsumerRules.replayDone(eventCount: 5, checkpoint: 9, head: 10))
        #expect(ConsumerRules.replayDone(eventCount: 5, checkpoint: 10, head: 10))
    }

    @Test("a moved checkpoint: behind is the truth to apply again from; at or ahead, go on from it")
    func moved() {
        #expect(ConsumerRules.checkpointMoved(stored: 5, checkpoint: 10) == .rewound(to: 5))
        #expect(ConsumerRules.checkpointMoved(stored: 10, checkpoint: 10) == .ahead(to: 10))
        #expect(ConsumerRules.checkpointMoved(stored: 15, checkpoint: 10) == .ahead(to: 15))
    }

    @Test("a batch is split on any lasting failure; a single poison event is a dead letter at once")
    func poison() {
        var batch = ApplyAttempts(batchSize: 3, poisonAttempts: 10)
        #expect(batch.failed(.poison) == .splitBatch)
        #expect(batch.failed(.handlerFailed) == .splitBatch)
        #expect(batch.handlerFailures == 0)
        var single = ApplyAttempts(batchSize: 1, poisonAttempts: 10)
        #expect(single.failed(.poison) == .deadLetter)
    }

    @Test("a failing handler is retried with back-off, then dead-lettered at the poisonAttempts-th failure")
    func handlerFailures() {
        var a = ApplyAttempts(batchSize: 1, poisonAttempts: 4)
        #expect(a.failed(.handlerFailed) == .retry(after: .milliseconds(100)))
        #expect(a.failed(.handlerFailed) == .retry(after: .milliseconds(200)))
        #expect(a.failed(.handlerFailed) == .retry(after: .milliseconds(400)))
        #expect(a.failed(.handlerFailed) == .deadLetter)
        #expect(a.handlerFailures == 4)
        // At least one attempt, whatever is configured.
        var one = ApplyAttempts(batchSize: 1, poisonAttempts: 0)
        #expect(one.failed(.handlerFailed) == .deadLetter)
    }

    @Test("an outage is retried without end, the back-off doubling up to 5 s; it never dead-letters")
    func transient() {
        var a = ApplyAttempts(batchSize: 500, poisonAttempts: 2)
        var delays: [Duration] = []
        for _ in 0..<12 {
            guard case .retry(let d) = a.failed(.transient) else { Issue.record("a transient failure must be retried"); return }
            delays.append(d)
        }
        #expect(delays.prefix(7) == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
                                      .milliseconds(1600), .milliseconds(3200), .seconds(5)])
        #expect(delays.suffix(5).allSatisfy { $0 == .seconds(5) })
        // Transient failures and handler failures share the back-off, not the count.
        var mixed = ApplyAttempts(batchSize: 1, poisonAttempts: 2)
        _ = mixed.failed(.transient)
        #expect(mixed.failed(.handlerFailed) == .retry(after: .milliseconds(200)))
        #expect(mixed.failed(.handlerFailed) == .deadLetter)
    }
}
