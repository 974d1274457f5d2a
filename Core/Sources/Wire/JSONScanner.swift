import Foundation

/// A structural scanner for one JSON object: finds the byte range of each top-level member
/// without building a tree, so the envelope header is read cheaply and the payload bytes are
/// handed to `JSONDecoder` once, by the code that knows its type.
///
/// It checks the structure it walks (brackets, strings, escapes, literals, numbers, commas and
/// colons); it does not decode values except where asked (``string(_:)``, ``integer(_:)``).
struct JSONScanner {
    enum Failure: Error, CustomStringConvertible {
        case malformed(String, at: Int)
        var description: String {
            switch self {
            case .malformed(let what, let at): "malformed JSON: \(what) at byte \(at)"
            }
        }
    }

    private let bytes: UnsafeRawBufferPointer
    private var i = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Bytes consumed so far.
    var position: Int { i }

    /// Scans a top-level object, calling `body` with each member's name and value byte range
    /// in order (no dictionary is built).
    static func forEachMember(of data: Data, _ body: (String, Range<Int>) throws -> Void) throws {
        try data.withUnsafeBytes { raw in
            var scanner = JSONScanner(raw)
            try scanner.object(body)
            scanner.skipWhitespace()
            if scanner.i != raw.count { throw Failure.malformed("trailing bytes", at: scanner.i) }
        }
    }

    /// Scans the object at `range` of `data`, calling `body` per member (absolute ranges).
    static func forEachMember(of data: Data, in range: Range<Int>, _ body: (String, Range<Int>) throws -> Void) throws {
        try data.withUnsafeBytes { raw in
            var scanner = JSONScanner(UnsafeRawBufferPointer(rebasing: raw[range]))
            try scanner.object { key, r in try body(key, (r.lowerBound + range.lowerBound)..<(r.upperBound + range.lowerBound)) }
        }
    }

    /// Scans a top-level object and returns its members as (key, value byte range).
    /// Duplicate keys keep the last value, as most JSON parsers do.
    static func members(of data: Data) throws -> [String: Range<Int>] {
        try data.withUnsafeBytes { raw in
            var scanner = JSONScanner(raw)
            let members = try scanner.object()
            scanner.skipWhitespace()
            if scanner.i != raw.count { throw Failure.malformed("trailing bytes", at: scanner.i) }
            return members
        }
    }

    /// Scans a nested object found at `range` of `data`.
    static func members(of data: Data, in range: Range<Int>) throws -> [String: Range<Int>] {
        try data.withUnsafeBytes { raw in
            var scanner = JSONScanner(UnsafeRawBufferPointer(rebasing: raw[range]))
            let found = try scanner.object()
            return found.mapValues { ($0.lowerBound + range.lowerBound)..<($0.upperBound + range.lowerBound) }
        }
    }

    /// Decodes the JSON string value at `range` (including its quotes).
    static func string(_ data: Data, _ range: Range<Int>) throws -> String {
        try data.withUnsafeBytes { raw in
            var scanner = JSONScanner(UnsafeRawBufferPointer(rebasing: raw[range]))
            scanner.skipWhitespace()
            return try scanner.decodeString()
        }
    }

    /// Whether the value at `range` is the literal `null`.
    static func isNull(_ data: Data, _ range: Range<Int>) -> Bool {
        range.count == 4 && data[data.startIndex + range.lowerBound] == UInt8(ascii: "n")
    }

    /// Decodes an integer value at `range`.
    static func integer(_ data: Data, _ range: Range<Int>) throws -> Int {
        let text = String(decoding: data[(data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)], as: UTF8.self)
        guard let v = Int(text) else { throw Failure.malformed("expected an integer", at: range.lowerBound) }
        return v
    }

    // MARK: - Scanning

    private var current: UInt8? { i < bytes.count ? bytes[i] : nil }

    mutating func skipWhitespace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    private mutating func expect(_ c: UInt8, _ what: String) throws {
        skipWhitespace()
        guard current == c else { throw Failure.malformed("expected \(what)", at: i) }
        i += 1
    }

    mutating func object() throws -> [String: Range<Int>] {
        var members: [String: Range<Int>] = [:]
        try object { key, range in members[key] = range }
        return members
    }

    mutating func object(_ body: (String, Range<Int>) throws -> Void) throws {
        try expect(UInt8(ascii: "{"), "'{'")
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            i += 1
            return
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw Failure.malformed("expected a member name", at: i) }
            let key = try decodeString()
            try expect(UInt8(ascii: ":"), "':'")
            skipWhitespace()
            let start = i
            try skipValue(depth: 1)
            try body(key, start..<i)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): i += 1
            case UInt8(ascii: "}"):
                i += 1
                return
            default: throw Failure.malformed("expected ',' or '}'", at: i)
            }
        }
    }

    private mutating func skipValue(depth: Int) throws {
        guard depth < 256 else { throw Failure.malformed("nesting too deep", at: i) }
        skipWhitespace()
        guard let c = current else { throw Failure.malformed("unexpected end", at: i) }
        switch c {
        case UInt8(ascii: "{"):
            i += 1
            skipWhitespace()
            if current == UInt8(ascii: "}") { i += 1; return }
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else { throw Failure.malformed("expected a member name", at: i) }
                try skipString()
                try expect(UInt8(ascii: ":"), "':'")
                try skipValue(depth: depth + 1)
                skipWhitespace()
                if current == UInt8(ascii: ",") { i += 1; continue }
                if current == UInt8(ascii: "}") { i += 1; return }
                throw Failure.malformed("expected ',' or '}'", at: i)
            }
        case UInt8(ascii: "["):
            i += 1
            skipWhitespace()
            if current == UInt8(ascii: "]") { i += 1; return }
            while true {
                try skipValue(depth: depth + 1)
                skipWhitespace()
                if current == UInt8(ascii: ",") { i += 1; continue }
                if current == UInt8(ascii: "]") { i += 1; return }
                throw Failure.malformed("expected ',' or ']'", at: i)
            }
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try skipNumber()
        default:
            throw Failure.malformed("unexpected character", at: i)
        }
    }

    private mutating func literal(_ word: StaticString) throws {
        let n = word.utf8CodeUnitCount
        guard i + n <= bytes.count else { throw Failure.malformed("bad literal", at: i) }
        let p = word.utf8Start
        for k in 0..<n where bytes[i + k] != p[k] {
            throw Failure.malformed("bad literal", at: i)
        }
        i += n
    }

    private mutating func skipNumber() throws {
        let start = i
        if current == UInt8(ascii: "-") { i += 1 }
        var digits = 0
        while let c = current, c >= 0x30, c <= 0x39 { i += 1; digits += 1 }
        if digits == 0 { throw Failure.malformed("bad number", at: start) }
        if current == UInt8(ascii: ".") {
            i += 1
            var frac = 0
            while let c = current, c >= 0x30, c <= 0x39 { i += 1; frac += 1 }
            if frac == 0 { throw Failure.malformed("bad number", at: start) }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            i += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { i += 1 }
            var exp = 0
            while let c = current, c >= 0x30, c <= 0x39 { i += 1; exp += 1 }
            if exp == 0 { throw Failure.malformed("bad number", at: start) }
        }
    }

    private mutating func skipString() throws {
        let start = i
        i += 1
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") { i += 1; return }
            if c == UInt8(ascii: "\\") { i += 2; continue }
            if c < 0x20 { throw Failure.malformed("control character in string", at: i) }
            i += 1
        }
        throw Failure.malformed("unterminated string", at: start)
    }

    mutating func decodeString() throws -> String {
        let start = i
        guard current == UInt8(ascii: "\"") else { throw Failure.malformed("expected a string", at: i) }
        i += 1
        let contentStart = i
        // Fast path: no escapes.
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                let s = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[contentStart..<i]), as: UTF8.self)
                i += 1
                return s
            }
            if c == UInt8(ascii: "\\") { break }
            if c < 0x20 { throw Failure.malformed("control character in string", at: i) }
            i += 1
        }
        guard i < bytes.count else { throw Failure.malformed("unterminated string", at: start) }
        var out = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[contentStart..<i]))
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                return String(decoding: out, as: UTF8.self)
            }
            if c < 0x20 { throw Failure.malformed("control character in string", at: i) }
            if c != UInt8(ascii: "\\") {
                out.append(c)
                i += 1
                continue
            }
            i += 1
            guard let e = current else { break }
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard current == UInt8(ascii: "\\"), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "u") else {
                        throw Failure.malformed("lone surrogate", at: i)
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw Failure.malformed("bad surrogate pair", at: i) }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let u = Unicode.Scalar(scalar) else { throw Failure.malformed("bad \\u escape", at: i) }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default:
                throw Failure.malformed("bad escape", at: i - 1)
            }
        }
        throw Failure.malformed("unterminated string", at: start)
    }

    /// The value of one hex digit, nil when `c` is not one.
    static func hexValue(_ c: UInt8) -> UInt32? {
        switch c {
        case 0x30...0x39: UInt32(c - 0x30)
        case 0x41...0x46: UInt32(c - 0x41 + 10)
        case 0x61...0x66: UInt32(c - 0x61 + 10)
        default: nil
        }
    }

    private mutating func hex4() throws -> UInt32 {
        guard i + 4 <= bytes.count else { throw Failure.malformed("short \\u escape", at: i) }
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard let d = Self.hexValue(bytes[i]) else { throw Failure.malformed("bad hex digit", at: i) }
            v = v << 4 | d
            i += 1
        }
        return v
    }
}

/// Appends JSON text to a byte buffer (strings escaped per RFC 8259).
struct JSONWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    mutating func raw(_ s: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    mutating func raw(_ data: Data) {
        bytes.append(contentsOf: data)
    }

    mutating func string(_ s: String) {
        bytes.append(0x22)
        var s = s
        s.withUTF8 { utf8 in
            var runStart = 0
            for (k, c) in utf8.enumerated() where c < 0x20 || c == 0x22 || c == 0x5C {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<k]))
                switch c {
                case 0x22: bytes.append(contentsOf: [0x5C, 0x22])
                case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: bytes.append(contentsOf: [0x5C, 0x6E])
                case 0x0D: bytes.append(contentsOf: [0x5C, 0x72])
                case 0x09: bytes.append(contentsOf: [0x5C, 0x74])
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(c >> 4)], hex[Int(c & 0xF)]])
                }
                runStart = k + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(0x22)
    }

    mutating func integer(_ v: Int) {
        if v == 0 {
            bytes.append(0x30)
            return
        }
        var magnitude = v.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while magnitude > 0 {
                buffer[n] = UInt8(48 + magnitude % 10)
                magnitude /= 10
                n += 1
            }
            if v < 0 { bytes.append(0x2D) }
            for k in stride(from: n - 1, through: 0, by: -1) { bytes.append(buffer[k]) }
        }
    }
}

/// Reads one member of a JSON object without decoding the rest: code that passes a value
/// through (the gateway's live stream) takes its bytes as they are.
public enum JSONMember {
    /// The raw JSON bytes of the top-level member `key` of the object in `data`, or nil when the
    /// object has no such member. Throws when `data` is not a JSON object.
    public static func raw(_ key: String, in data: Data) throws -> Data? {
        let data = data.startIndex == 0 ? data : Data(data)
        var found: Range<Int>?
        try JSONScanner.forEachMember(of: data) { k, r in
            if k == key, found == nil { found = r }
        }
        return found.map { data.subdata(in: $0) }
    }
}
