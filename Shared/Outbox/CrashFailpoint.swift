import Foundation
import Synchronization

/// A crash for fault tests: the process kills itself with SIGKILL the `after`-th time it passes
/// this point, as a power cut or the kernel's OOM killer would, with nothing flushed or closed.
///
/// Services arm it only from `CHRONIR_FAILPOINT_KILL_BEFORE_CHECKPOINT=<stream>:<n>` (see
/// docs/operations.md), which the consumer-crash tests set; unset, no failpoint exists.
public final class CrashFailpoint: Sendable {
    /// Which passage kills (1 is the first).
    public let after: Int
    private let passed = Atomic<Int>(0)

    public init(after: Int) {
        precondition(after >= 1, "a failpoint kills on its first passage or later")
        self.after = after
    }

    /// Counts a passage; the `after`-th writes `what` to standard error and kills the process.
    public func pass(_ what: @autoclosure () -> String) {
        let n = passed.add(1, ordering: .relaxed).newValue
        guard n == after else { return }
        FileHandle.standardError.write(Data("failpoint: SIGKILL after \(what())\n".utf8))
        kill(getpid(), SIGKILL)
    }
}
