/// SplitMix64: a small, fast generator whose whole sequence follows from its seed, so a load
/// run's plan (due minutes, who completes what) is the same for the same `--seed`.
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    /// A generator for one item of a run (an alarm of the plan, a user): its draws do not depend
    /// on the order concurrent tasks happen to make them in.
    init(seed: UInt64, item: Int, stream: UInt64 = 0) {
        var mixer = SeededGenerator(seed: seed ^ (UInt64(truncatingIfNeeded: item) &* 0x9E37_79B9_7F4A_7C15) ^ (stream &* 0xD1B5_4A32_D192_ED03))
        state = mixer.next()
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
