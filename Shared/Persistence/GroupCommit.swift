import Synchronization

/// Collects concurrent calls into batches, each handled by one call of `run` (typically one
/// transaction): "group commit". When nothing is running, a call starts a batch of its own at
/// once, so a lone call waits for nobody; while `maxRunning` batches run, calls queue and the
/// next batch takes up to `maxBatch` of them. A burst of N calls then costs about
/// N / `maxBatch` transactions instead of N.
///
/// `run` answers every item of its batch, in order. An answer missing from its result (a
/// shorter array) is a `GroupCommit.Unanswered` error for that caller.
public final class GroupCommit<Item: Sendable, Output: Sendable>: Sendable {
    /// Handles one batch: one result per item, in the items' order.
    public typealias Run = @Sendable ([Item]) async -> [Result<Output, any Error>]

    /// `run` returned fewer results than its batch had items.
    public struct Unanswered: Error, CustomStringConvertible {
        public var description: String { "the batch ended without an answer for this item" }
    }

    private struct Waiting: Sendable {
        var item: Item
        var continuation: CheckedContinuation<Output, any Error>
    }

    private struct State: Sendable {
        var queue: [Waiting] = []
        var running = 0
    }

    private let state = Mutex(State())
    private let maxBatch: Int
    private let maxRunning: Int
    private let run: Run

    /// - Parameters:
    ///   - maxBatch: the most items one batch takes.
    ///   - maxRunning: the most batches running at once (keep it below the connection pool).
    public init(maxBatch: Int = 500, maxRunning: Int = 2, run: @escaping Run) {
        precondition(maxBatch >= 1 && maxRunning >= 1)
        self.maxBatch = maxBatch
        self.maxRunning = maxRunning
        self.run = run
    }

    /// Queues `item` and returns its answer when its batch has run.
    public func submit(_ item: Item) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            let start = state.withLock { s -> Bool in
                s.queue.append(Waiting(item: item, continuation: continuation))
                guard s.running < maxRunning else { return false }
                s.running += 1
                return true
            }
            if start { Task { await self.drain() } }
        }
    }

    /// Runs batches until the queue is empty.
    private func drain() async {
        while true {
            let batch = state.withLock { s -> [Waiting] in
                guard !s.queue.isEmpty else {
                    s.running -= 1
                    return []
                }
                let n = min(maxBatch, s.queue.count)
                let batch = Array(s.queue.prefix(n))
                s.queue.removeFirst(n)
                return batch
            }
            guard !batch.isEmpty else { return }
            let results = await run(batch.map(\.item))
            for (i, waiting) in batch.enumerated() {
                waiting.continuation.resume(with: i < results.count ? results[i] : .failure(Unanswered()))
            }
        }
    }
}
