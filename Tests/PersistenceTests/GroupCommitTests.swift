import Persistence
import Synchronization
import Testing

/// The collector behind group commit: batches form while others run, every caller gets its
/// own answer, never more batches at once than allowed.
@Suite("Group commit")
struct GroupCommitTests {
    /// Records the batches a run saw and how many ran at once.
    final class Probe: Sendable {
        struct Seen { var batches: [[Int]] = []; var running = 0; var most = 0 }
        let seen = Mutex(Seen())

        func run(_ items: [Int]) async -> [Result<Int, any Error>] {
            seen.withLock { $0.running += 1; $0.most = max($0.most, $0.running); $0.batches.append(items) }
            try? await Task.sleep(for: .milliseconds(20))
            seen.withLock { $0.running -= 1 }
            return items.map { $0 % 7 == 0 ? .failure(Odd(item: $0)) : .success($0 * 10) }
        }
    }

    struct Odd: Error, Equatable { let item: Int }

    @Test("500 concurrent calls: each gets its own answer or error, in few batches, at most 2 at once")
    func concurrentCalls() async throws {
        let probe = Probe()
        let commit = GroupCommit<Int, Int>(maxBatch: 100, maxRunning: 2) { await probe.run($0) }
        let answers = await withTaskGroup(of: (Int, Result<Int, any Error>).self) { group in
            for i in 1...500 {
                group.addTask {
                    do { return (i, .success(try await commit.submit(i))) } catch { return (i, .failure(error)) }
                }
            }
            return await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(answers.count == 500)
        for (i, answer) in answers {
            switch answer {
            case .success(let v): #expect(i % 7 != 0 && v == i * 10)
            case .failure(let e): #expect(i % 7 == 0 && (e as? Odd) == Odd(item: i))
            }
        }
        let seen = probe.seen.withLock { $0 }
        #expect(seen.most <= 2)
        #expect(seen.batches.allSatisfy { $0.count <= 100 })
        #expect(seen.batches.flatMap { $0 }.sorted() == Array(1...500))
        #expect(seen.batches.count < 50, "batches: \(seen.batches.map(\.count))")
    }

    @Test("a lone call runs at once in a batch of its own; a run that answers short fails the unanswered")
    func loneAndShort() async throws {
        let probe = Probe()
        let commit = GroupCommit<Int, Int>(maxBatch: 10, maxRunning: 1) { await probe.run($0) }
        #expect(try await commit.submit(3) == 30)
        #expect(probe.seen.withLock { $0.batches } == [[3]])
        let short = GroupCommit<Int, Int>(maxBatch: 10, maxRunning: 1) { items in items.dropLast().map { .success($0) } }
        await #expect(throws: GroupCommit<Int, Int>.Unanswered.self) { try await short.submit(1) }
    }
}
