/// The deadline of the request a task is handling, on this process's monotonic clock: the
/// caller's deadline header read with its clock offset (``PeerClockOffsets``). Set by
/// ``RPCServer`` around each handler; nil outside a request or when the caller sent none.
///
/// Work that is costly and useless once the caller has stopped waiting (a password hash queued
/// behind others) checks it when it is about to start, and gives up with `deadlineExceeded`.
public enum RequestDeadline {
    @TaskLocal public static var current: ContinuousClock.Instant?

    /// Whether the current request's caller has stopped waiting.
    public static var passed: Bool {
        guard let current else { return false }
        return ContinuousClock.now >= current
    }
}
