import Foundation

/// RFC 9562 version 7 UUIDs: time-ordered (48-bit Unix milliseconds first), so ids sort
/// by creation time and index well.
public enum UUIDv7 {
    /// A new version 7 UUID for the current time (randomness from ``FastRandom``).
    public static func make(now: Date = Date()) -> UUID {
        var rng = FastRandom()
        return make(epochMilliseconds: UInt64(max(0, now.timeIntervalSince1970 * 1000)), using: &rng)
    }

    /// A version 7 UUID for a given time with randomness from `rng`.
    public static func make<R: RandomNumberGenerator>(epochMilliseconds ms: UInt64, using rng: inout R) -> UUID {
        let r1 = rng.next() as UInt64
        let r2 = rng.next() as UInt64
        var b = [UInt8](repeating: 0, count: 16)
        for k in 0..<6 { b[k] = UInt8(truncatingIfNeeded: ms >> (8 * (5 - UInt64(k)))) }
        b[6] = 0x70 | UInt8(truncatingIfNeeded: r1 & 0x0F)
        b[7] = UInt8(truncatingIfNeeded: r1 >> 8)
        b[8] = 0x80 | UInt8(truncatingIfNeeded: (r1 >> 16) & 0x3F)
        for k in 9..<16 { b[k] = UInt8(truncatingIfNeeded: r2 >> (8 * UInt64(k - 9))) }
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    /// A new version 7 UUID as a lowercase string.
    public static func string(now: Date = Date()) -> String {
        lowercased(make(now: now))
    }

    /// The canonical lowercase form of any UUID (`UUID.uuidString` is upper-case and slow).
    public static func lowercased(_ uuid: UUID) -> String {
        let digits: StaticString = "0123456789abcdef"
        return withUnsafeBytes(of: uuid.uuid) { raw in
            String(unsafeUninitializedCapacity: 36) { out in
                var k = 0
                digits.withUTF8Buffer { hex in
                    for (i, byte) in raw.enumerated() {
                        if i == 4 || i == 6 || i == 8 || i == 10 {
                            out[k] = UInt8(ascii: "-")
                            k += 1
                        }
                        out[k] = hex[Int(byte >> 4)]
                        out[k + 1] = hex[Int(byte & 0x0F)]
                        k += 2
                    }
                }
                return k
            }
        }
    }
}
