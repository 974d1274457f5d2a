import Foundation

/// One value of a parsed JSON text, in a flat array (the tape) instead of a tree: where the
/// value's bytes are and, for an object or array, where its members end. Nothing is copied out
/// of the input: strings and numbers are read from their bytes when a decoder asks for them.
///
/// An object is its entry followed by its members, each a key entry (a string) and then the
/// value's entries; an array is its entry followed by its elements' entries.
struct TapeEntry {
    enum Kind: UInt8 { case null, `true`, `false`, number, string, array, object }

    var kind: Kind
    /// A string: it holds escapes. An object: two members share a name (lookups scan for the
    /// last one). A number: it has a fraction or an exponent.
    var flag: Bool = false
    /// The first byte of the value (a string: the first byte after its opening quote).
    var start: Int32
    /// Bytes of a number's text or a string's content (without quotes).
    var length: Int32 = 0
    /// The index of the entry after this value and all of its members.
    var end: Int32 = 0
    /// Members of an object, elements of an array.
    var count: Int32 = 0
    /// An object: the key entry of the member found last (where the next lookup starts, since
    /// code reads members in the order they were written, and often asks for one twice).
    var hint: Int32 = 0
}

/// Parses JSON bytes into ``TapeEntry``s in one pass: structure, literals, numbers and string
/// escapes are checked; string contents are not decoded.
struct JSONTapeParser {
    struct Failure: Error {
        let message: String
        let offset: Int
    }

    private let bytes: UnsafeRawBufferPointer
    private(set) var offset = 0
    private(set) var tape: [TapeEntry] = []

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        // Message JSON holds about one entry per 5 to 8 bytes: one allocation for most inputs
        // (capped: a large photo upload holds few entries).
        tape.reserveCapacity(min(bytes.count / 5 + 8, 4096))
    }

    /// Parses the whole input as one value.
    static func parse(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> [TapeEntry] {
        guard bytes.count < Int(Int32.max) else { throw Failure(message: "input too large", offset: 0) }
        var parser = JSONTapeParser(bytes)
        try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.offset >= bytes.count else { throw Failure(message: "trailing bytes", offset: parser.offset) }
        return parser.tape
    }

    private mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    private func fail(_ message: String) -> Failure { Failure(message: message, offset: offset) }

    private mutating func parseValue(depth: Int) throws(Failure) {
        guard depth < 512 else { throw fail("nesting too deep") }
        skipWhitespace()
        guard offset < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[offset] {
        case UInt8(ascii: "{"): try parseObject(depth: depth)
        case UInt8(ascii: "["): try parseArray(depth: depth)
        case UInt8(ascii: "\""): try parseString()
        case UInt8(ascii: "t"): try literal("true", .true)
        case UInt8(ascii: "f"): try literal("false", .false)
        case UInt8(ascii: "n"): try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try parseNumber()
        default: throw fail("unexpected character")
        }
    }

    private mutating func parseObject(depth: Int) throws(Failure) {
        let index = tape.count
        tape.append(TapeEntry(kind: .object, start: Int32(offset), hint: Int32(index + 1)))
        offset += 1
        skipWhitespace()
        var count: Int32 = 0
        var seen: UInt64 = 0
        var duplicate = false
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") {
            offset += 1
        } else {
            while true {
                skipWhitespace()
                guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
                let key = tape.count
                try parseString()
                // Repeated names make lookups scan for the last one. A cheap filter finds
                // candidates, checked exactly in small objects; in large ones a hit just flags
                // the object (an exact check per name would be quadratic), and an escaped name,
                // whose bytes need not match its text, flags it too.
                if !duplicate {
                    let bit = UInt64(1) << (keyHash(key) & 63)
                    if tape[key].flag {
                        duplicate = true
                    } else if seen & bit != 0 {
                        duplicate = count >= 32 || hasEarlierKey(like: key, in: index)
                    }
                    seen |= bit
                }
                skipWhitespace()
                guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                offset += 1
                try parseValue(depth: depth + 1)
                count += 1
                skipWhitespace()
                guard offset < bytes.count else { throw fail("unterminated object") }
                if bytes[offset] == UInt8(ascii: ",") { offset += 1; continue }
                if bytes[offset] == UInt8(ascii: "}") { offset += 1; break }
                throw fail("expected ',' or '}'")
            }
        }
        tape[index].count = count
        tape[index].flag = duplicate
        tape[index].end = Int32(tape.count)
    }

    private mutating func parseArray(depth: Int) throws(Failure) {
        let index = tape.count
        tape.append(TapeEntry(kind: .array, start: Int32(offset)))
        offset += 1
        skipWhitespace()
        var count: Int32 = 0
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") {
            offset += 1
        } else {
            while true {
                try parseValue(depth: depth + 1)
                count += 1
                skipWhitespace()
                guard offset < bytes.count else { throw fail("unterminated array") }
                if bytes[offset] == UInt8(ascii: ",") { offset += 1; continue }
                if bytes[offset] == UInt8(ascii: "]") { offset += 1; break }
                throw fail("expected ',' or ']'")
            }
        }
        tape[index].count = count
        tape[index].end = Int32(tape.count)
    }

    private func keyHash(_ key: Int) -> Int {
        let e = tape[key]
        var h = Int(e.length)
        if e.length > 0 {
            h = h &* 31 &+ Int(bytes[Int(e.start)])
            h = h &* 31 &+ Int(bytes[Int(e.start + e.length) - 1])
        }
        return h
    }

    /// Whether the key entry `key` repeats a name of an earlier member of the object at `object`.
    private func hasEarlierKey(like key: Int, in object: Int) -> Bool {
        var k = object + 1
        while k < key {
            if JSONTapeText.sameString(tape[k], tape[key], in: bytes) { return true }
            k = Int(tape[k + 1].end)
        }
        return false
    }

    private mutating func literal(_ word: StaticString, _ kind: TapeEntry.Kind) throws(Failure) {
        let n = word.utf8CodeUnitCount
        guard offset + n <= bytes.count else { throw fail("bad literal") }
        let p = word.utf8Start
        for k in 0..<n where bytes[offset + k] != p[k] { throw fail("bad literal") }
        tape.append(TapeEntry(kind: kind, start: Int32(offset), end: Int32(tape.count + 1)))
        offset += n
    }

    private mutating func parseNumber() throws(Failure) {
        let start = offset
        var real = false
        if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        var digits = 0
        while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 { offset += 1; digits += 1 }
        guard digits > 0 else { throw fail("bad number") }
        if digits > 1, bytes[start + (bytes[start] == UInt8(ascii: "-") ? 1 : 0)] == 0x30 { throw fail("leading zero in number") }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            real = true
            offset += 1
            var frac = 0
            while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 { offset += 1; frac += 1 }
            guard frac > 0 else { throw fail("bad number") }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            real = true
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            var exp = 0
            while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 { offset += 1; exp += 1 }
            guard exp > 0 else { throw fail("bad number") }
        }
        tape.append(TapeEntry(kind: .number, flag: real, start: Int32(start), length: Int32(offset - start),
                              end: Int32(tape.count + 1)))
    }

    /// Finds a string's end, checking its escapes (decoding them waits until the value is read).
    private mutating func parseString() throws(Failure) {
        let quote = offset
        offset += 1
        var escaped = false
        while offset < bytes.count {
            let c = bytes[offset]
            if c == UInt8(ascii: "\"") {
                tape.append(TapeEntry(kind: .string, flag: escaped, start: Int32(quote + 1),
                                      length: Int32(offset - quote - 1), end: Int32(tape.count + 1)))
                offset += 1
                return
            }
            if c < 0x20 { throw fail("control character in string") }
            if c == UInt8(ascii: "\\") {
                escaped = true
                offset += 1
                guard offset < bytes.count else { break }
                switch bytes[offset] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    offset += 1
                case UInt8(ascii: "u"):
                    let unit = try hex4(at: offset + 1)
                    offset += 5
                    if (0xDC00...0xDFFF).contains(unit) { throw fail("lone surrogate") }
                    if (0xD800...0xDBFF).contains(unit) {
                        guard offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u"),
                              (0xDC00...0xDFFF).contains(try hex4(at: offset + 2)) else { throw fail("lone surrogate") }
                        offset += 6
                    }
                default:
                    throw fail("bad escape")
                }
                continue
            }
            offset += 1
        }
        throw Failure(message: "unterminated string", offset: quote)
    }
}

extension JSONTapeParser {
    /// The code unit of the four hex digits at `at` (a `\u` escape's).
    fileprivate func hex4(at: Int) throws(Failure) -> UInt32 {
        guard at + 4 <= bytes.count else { throw Failure(message: "short \\u escape", offset: at) }
        var v: UInt32 = 0
        for k in at..<(at + 4) {
            guard let d = JSONScanner.hexValue(bytes[k]) else { throw Failure(message: "bad hex digit", offset: k) }
            v = v << 4 | d
        }
        return v
    }
}

/// Reading strings and numbers out of the input bytes of a tape.
enum JSONTapeText {
    /// A string entry's value: its bytes as they are, or with escapes decoded.
    static func string(_ e: TapeEntry, in bytes: UnsafeRawBufferPointer) throws -> String {
        let content = UnsafeRawBufferPointer(rebasing: bytes[Int(e.start)..<Int(e.start + e.length)])
        guard e.flag else { return String(decoding: content, as: UTF8.self) }
        var scanner = JSONScanner(UnsafeRawBufferPointer(rebasing: bytes[(Int(e.start) - 1)...]))
        return try scanner.decodeString()
    }

    /// Whether two string entries hold the same text.
    static func sameString(_ a: TapeEntry, _ b: TapeEntry, in bytes: UnsafeRawBufferPointer) -> Bool {
        if !a.flag, !b.flag {
            return a.length == b.length && memcmp(bytes.baseAddress! + Int(a.start), bytes.baseAddress! + Int(b.start), Int(a.length)) == 0
        }
        return (try? string(a, in: bytes)) == (try? string(b, in: bytes))
    }

    /// Whether a string entry's text is `name`.
    static func equals(_ e: TapeEntry, _ name: String, in bytes: UnsafeRawBufferPointer) -> Bool {
        if e.flag { return (try? string(e, in: bytes)) == name }
        if let same = name.utf8.withContiguousStorageIfAvailable({ utf8 -> Bool in
            utf8.count == Int(e.length) && (utf8.count == 0 || memcmp(utf8.baseAddress!, bytes.baseAddress! + Int(e.start), utf8.count) == 0)
        }) {
            return same
        }
        return name.utf8.elementsEqual(UnsafeRawBufferPointer(rebasing: bytes[Int(e.start)..<Int(e.start + e.length)]))
    }

    /// A number entry's text.
    static func numberText(_ e: TapeEntry, in bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[Int(e.start)..<Int(e.start + e.length)]), as: UTF8.self)
    }

    /// A whole number entry read from its digits; nil when it has a fraction or an exponent, or
    /// does not fit.
    static func integer<I: FixedWidthInteger>(_ e: TapeEntry, in bytes: UnsafeRawBufferPointer, as: I.Type) -> I? {
        guard !e.flag else { return nil }
        var k = Int(e.start)
        let end = k + Int(e.length)
        let negative = bytes[k] == UInt8(ascii: "-")
        if negative {
            guard I.isSigned else { return k + 2 == end && bytes[k + 1] == 0x30 ? 0 : nil }
            k += 1
        }
        var v: I = 0
        while k < end {
            let d = I(bytes[k] &- 0x30)
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (s, o2) = negative ? m.subtractingReportingOverflow(d) : m.addingReportingOverflow(d)
            guard !o1, !o2 else { return nil }
            v = s
            k += 1
        }
        return v
    }
}
