import Foundation
import Synchronization

/// A crash or a pause for fault tests: the `after`-th time the process passes this point it
/// sends itself `signal`: SIGKILL, as a power cut or the kernel's OOM killer would, with nothing
/// flushed or closed; or SIGSTOP, as a long GC-like pause or a frozen VM would, until the test
/// sends SIGCONT.
///
/// Services arm failpoints only from `CHRONIR_FAILPOINT_*` settings (see docs/operations.md),
/// which the fault tests set; unset, no failpoint exists.
public final class CrashFailpoint: Sendable {
    /// Which passage signals (1 is the first).
    public let after: Int
    /// The signal sent (SIGKILL or SIGSTOP).
    public let signal: Int32
    private let passed = Atomic<Int>(0)

    public init(after: Int, signal: Int32 = SIGKILL) {
        precondition(after >= 1, "a failpoint fires on its first passage or later")
        self.after = after
        self.signal = signal
    }

    /// Counts a passage; the `after`-th writes `what` to standard error and signals the process.
    public func pass(_ what: @autoclosure () -> String) {
        let n = passed.add(1, ordering: .relaxed).newValue
        guard n == after else { return }
        let name = signal == SIGSTOP ? "SIGSTOP" : signal == SIGKILL ? "SIGKILL" : "signal \(signal)"
        FileHandle.standardError.write(Data("failpoint: \(name) after \(what())\n".utf8))
        kill(getpid(), signal)
    }
}
