import Foundation

/// Milliseconds of a clock that never goes back and is not stepped (CLOCK_MONOTONIC; its zero
/// is arbitrary).
public func monotonicMilliseconds() -> Int64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Int64(t.tv_sec) * 1000 + Int64(t.tv_nsec) / 1_000_000
}
