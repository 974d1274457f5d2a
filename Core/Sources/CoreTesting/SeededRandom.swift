import Foundation

/// SplitMix64 with a known seed, so a random test's failure can be replayed: the seed comes from
/// `CHRONIR_TEST_SEED` when it is set, else it is chosen at random; either way it is printed, and
/// tests put it in their failure messages.
public struct SeededRandom: RandomNumberGenerator {
    public let seed: UInt64
    private var state: UInt64

    public init(seed: UInt64) {
        self.seed = seed
        state = seed
    }

    /// A generator for the test named `test`, its seed printed with how to replay it.
    public static func forTest(_ test: String) -> SeededRandom {
        let fixed = ProcessInfo.processInfo.environment["CHRONIR_TEST_SEED"].flatMap { UInt64($0) }
        let seed = fixed ?? UInt64.random(in: .min ... .max)
        print("\(test): seed \(seed) (CHRONIR_TEST_SEED=\(seed) replays it)")
        return SeededRandom(seed: seed)
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
