import Foundation
import Messaging

/// Text the services cannot store: U+0000 (PostgreSQL's `text` refuses it) and unpaired UTF-16
/// surrogates (`"\ud800"`, not a character at all). Found in a request body, either is
/// answered `CA016` naming the field instead of failing deep inside a service.
enum BodyText {
    /// The path (`schedule.timezone`, `events[2].name`) of the first string or key of `value`
    /// holding U+0000, or nil.
    static func fieldWithNUL(in value: JSONValue, path: String = "") -> String? {
        switch value {
        case .string(let s):
            return s.unicodeScalars.contains("\u{0}") ? (path.isEmpty ? "body" : path) : nil
        case .array(let items):
            for (i, item) in items.enumerated() {
                if let p = fieldWithNUL(in: item, path: "\(path)[\(i)]") { return p }
            }
            return nil
        case .object(let members):
            for key in members.keys.sorted() {
                let p = path.isEmpty ? key : "\(path).\(key)"
                if key.unicodeScalars.contains("\u{0}") { return p }
                if let found = fieldWithNUL(in: members[key]!, path: p) { return found }
            }
            return nil
        default:
            return nil
        }
    }

    /// The path of the first string of a JSON text holding an unpaired surrogate escape, or
    /// nil (also for text that is malformed in some other way).
    static func fieldWithLoneSurrogate(in data: Data) -> String? {
        let bytes = [UInt8](data)
        var scopes: [Scope] = []      // open objects/arrays, innermost last
        var i = 0
        var lastKey: String? = nil
        func path() -> String {
            var out = ""
            for scope in scopes {
                switch scope {
                case .object(let key): if let key { out += out.isEmpty ? key : ".\(key)" }
                case .array(let index): out += "[\(index)]"
                }
            }
            return out.isEmpty ? "body" : out
        }
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "{"): scopes.append(.object(nil)); i += 1
            case UInt8(ascii: "["): scopes.append(.array(0)); i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): _ = scopes.popLast(); i += 1
            case UInt8(ascii: ","):
                if case .array(let n)? = scopes.last { scopes[scopes.count - 1] = .array(n + 1) }
                i += 1
            case UInt8(ascii: ":"):
                if case .object? = scopes.last { scopes[scopes.count - 1] = .object(lastKey) }
                i += 1
            case UInt8(ascii: "\""):
                guard let (text, lone, end) = readString(bytes, from: i + 1) else { return nil }
                var isKey = false
                if case .object? = scopes.last {
                    var j = end
                    while j < bytes.count, bytes[j] == 0x20 || bytes[j] == 0x0A || bytes[j] == 0x0D || bytes[j] == 0x09 { j += 1 }
                    isKey = j < bytes.count && bytes[j] == UInt8(ascii: ":")
                }
                if isKey {
                    lastKey = text
                    if lone { return (path() == "body" ? "" : path() + ".") + text }
                } else if lone {
                    return path()
                }
                i = end
            default: i += 1
            }
        }
        return nil
    }

    private enum Scope { case object(String?), array(Int) }

    /// Reads a string body starting after its opening quote: its text (escapes other than
    /// `\u` kept loosely), whether it holds an unpaired surrogate, and the index past its quote.
    private static func readString(_ b: [UInt8], from start: Int) -> (String, Bool, Int)? {
        var i = start
        var lone = false
        var pendingHigh = false
        var raw: [UInt8] = []
        while i < b.count {
            let c = b[i]
            if c == UInt8(ascii: "\"") {
                if pendingHigh { lone = true }
                return (String(decoding: raw, as: UTF8.self), lone, i + 1)
            }
            if c == UInt8(ascii: "\\"), i + 1 < b.count {
                if b[i + 1] == UInt8(ascii: "u"), i + 6 <= b.count, let v = UInt16(String(decoding: b[(i + 2)..<(i + 6)], as: UTF8.self), radix: 16) {
                    if (0xD800...0xDBFF).contains(v) {
                        if pendingHigh { lone = true }
                        pendingHigh = true
                    } else if (0xDC00...0xDFFF).contains(v) {
                        if !pendingHigh { lone = true }
                        pendingHigh = false
                    } else {
                        if pendingHigh { lone = true }
                        pendingHigh = false
                        if let u = Unicode.Scalar(UInt32(v)) { raw.append(contentsOf: Array(String(u).utf8)) }
                    }
                    i += 6
                    continue
                }
                if pendingHigh { lone = true }
                pendingHigh = false
                raw.append(b[i + 1])
                i += 2
                continue
            }
            if pendingHigh { lone = true }
            pendingHigh = false
            raw.append(c)
            i += 1
        }
        return nil
    }
}
