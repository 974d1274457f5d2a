/// Lower-case hexadecimal text of bytes (ids, pseudonyms), without `String(format:)`.
public enum Hex {
    /// Two lower-case hex digits per byte, in order.
    public static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        let digits: StaticString = "0123456789abcdef"
        var out = [UInt8]()
        out.reserveCapacity(bytes.underestimatedCount * 2)
        digits.withUTF8Buffer { hex in
            for byte in bytes {
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
