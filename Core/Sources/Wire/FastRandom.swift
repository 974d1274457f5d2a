import Synchronization

/// A fast userspace random generator (xoshiro256**) seeded once from the system CSPRNG.
///
/// For message ids and trace ids, which need uniqueness, not secrecy: the system generator
/// costs a `getrandom` syscall per call, several per message. Secrets (tokens, invite codes)
/// keep using `SystemRandomNumberGenerator`.
public struct FastRandom: RandomNumberGenerator, Sendable {
    private static let state = Mutex<Xoshiro>(Xoshiro())

    public init() {}

    public mutating func next() -> UInt64 {
        Self.state.withLock { $0.next() }
    }

    /// Two values under one lock.
    public static func pair() -> (UInt64, UInt64) {
        state.withLock { ($0.next(), $0.next()) }
    }

    struct Xoshiro {
        var s: (UInt64, UInt64, UInt64, UInt64)

        init() {
            var seed = SystemRandomNumberGenerator()
            s = (seed.next(), seed.next(), seed.next(), seed.next())
            if s == (0, 0, 0, 0) { s.0 = 1 }
        }

        mutating func next() -> UInt64 {
            let result = rotl(s.1 &* 5, 7) &* 9
            let t = s.1 << 17
            s.2 ^= s.0
            s.3 ^= s.1
            s.1 ^= s.2
            s.0 ^= s.3
            s.2 ^= t
            s.3 = rotl(s.3, 45)
            return result
        }

        private func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }
    }
}
