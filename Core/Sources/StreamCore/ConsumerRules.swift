/// The stream consumer's decisions about positions (``StreamConsumer`` in Messaging is the shell
/// that reads, applies and waits): what an arriving event or heartbeat means against what was
/// applied, what a replay batch skips as lost past the producer's retention and what it applies,
/// and what a checkpoint another writer moved means. Positions are stream sequence numbers:
/// `checkpoint` is the last applied, `pending` the events accepted after it and not yet applied.
public enum ConsumerRules {
    /// An event that arrived live, against the next number expected.
    public enum Arrival: Equatable, Sendable {
        /// At or before what was accepted: a repeat (another path brought it first).
        case duplicate
        /// The next one: accept it.
        case next
        /// After a hole: ask the producer for what is missing (the replay).
        case gap
    }

    /// What event `seq` is, `pending` events after `checkpoint` already accepted.
    public static func arrival(seq: Int64, checkpoint: Int64, pending: Int) -> Arrival {
        let expected = checkpoint + Int64(pending) + 1
        if seq < expected { return .duplicate }
        return seq == expected ? .next : .gap
    }

    /// What a producer's heartbeat announcing `head` asks of the consumer: `catchUp` when the
    /// producer holds events not seen yet (a replay), `behind` when its head is below what was
    /// applied (a rewound producer, or an old heartbeat of another replica overtaken by newer
    /// events: the shell asks which).
    public static func heartbeat(head: Int64, checkpoint: Int64, pending: Int) -> (catchUp: Bool, behind: Bool) {
        (head > checkpoint + Int64(pending), head < checkpoint)
    }

    /// In a replay answer: the number to skip to when the events after `checkpoint` are gone past
    /// the producer's retention (`firstAvailable` is the oldest it still holds, `firstEvent` the
    /// first number in the answer, `head` its last), else nil. Nothing is skipped while the next
    /// event is still there, or when the producer holds nothing beyond the checkpoint.
    public static func retentionSkip(checkpoint: Int64, firstAvailable: Int64, firstEvent: Int64?, head: Int64) -> Int64? {
        guard firstAvailable > checkpoint + 1 else { return nil }
        let missing = firstEvent.map { $0 > checkpoint + 1 } ?? (head > checkpoint)
        guard missing else { return nil }
        return (firstEvent ?? firstAvailable) - 1
    }

    /// Whether a replay answer ends the catch-up: it was empty, or the checkpoint reached the
    /// head it announced.
    public static func replayDone(eventCount: Int, checkpoint: Int64, head: Int64) -> Bool {
        eventCount == 0 || checkpoint >= head
    }

    /// A stored checkpoint another writer set, against the consumer's own.
    public enum MovedCheckpoint: Equatable, Sendable {
        /// Behind: the consumer's database went back (a restore, a failover that lost commits)
        /// or an operator set it back. What it holds is the truth; the events after it are
        /// applied again from the producer, never skipped.
        case rewound(to: Int64)
        /// At or ahead: another replica applied these; go on from there.
        case ahead(to: Int64)
    }

    public static func checkpointMoved(stored: Int64, checkpoint: Int64) -> MovedCheckpoint {
        stored < checkpoint ? .rewound(to: stored) : .ahead(to: max(stored, checkpoint))
    }
}

/// One batch's attempts to apply: what to do after each failure, by its kind. A batch that
/// cannot be applied is split and its events tried alone; an event that is poison (its data can
/// never be applied), or whose handler failed the same way `poisonAttempts` times, becomes a
/// dead letter (replayable once fixed) and the stream goes on; anything else (an outage) is
/// retried without end, backing off from 100 ms to 5 s.
public struct ApplyAttempts: Sendable {
    /// How an attempt failed.
    public enum Failure: Sendable {
        /// The event itself is wrong (a service error, undecodable): never applicable.
        case poison
        /// The handler failed in a way retrying does not change (a constraint, a bug).
        case handlerFailed
        /// Anything else (the database or a peer away): it passes.
        case transient
    }

    /// What the shell does next.
    public enum Step: Equatable, Sendable {
        /// Apply each event of the batch alone.
        case splitBatch
        /// Record the (single) event as a dead letter and go on past it.
        case deadLetter
        /// Wait this long and apply the same batch again.
        case retry(after: Duration)
    }

    public let batchSize: Int
    public let poisonAttempts: Int
    /// Handler failures of this (single-event) batch so far.
    public private(set) var handlerFailures = 0
    private var delay = Self.firstDelay

    public static let firstDelay = Duration.milliseconds(100)
    public static let longestDelay = Duration.seconds(5)

    public init(batchSize: Int, poisonAttempts: Int) {
        self.batchSize = batchSize
        self.poisonAttempts = max(1, poisonAttempts)
    }

    /// The step after an attempt that failed with `failure`.
    public mutating func failed(_ failure: Failure) -> Step {
        switch failure {
        case .poison:
            return batchSize > 1 ? .splitBatch : .deadLetter
        case .handlerFailed:
            if batchSize > 1 { return .splitBatch }
            handlerFailures += 1
            return handlerFailures >= poisonAttempts ? .deadLetter : .retry(after: backOff())
        case .transient:
            return .retry(after: backOff())
        }
    }

    private mutating func backOff() -> Duration {
        let d = delay
        delay = min(delay * 2, Self.longestDelay)
        return d
    }
}
