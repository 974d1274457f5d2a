import Foundation
import Wire
import CoreTesting
import Testing

@Suite("Fast JSON coding")
struct FastJSONTests {
    enum Color: String, Codable, Equatable { case red, green }
    enum Level: Int, Codable, Equatable { case low = 1, high = 2 }

    struct Inner: Codable, Equatable {
        var name: String
        var tags: [String]
    }

    struct Everything: Codable, Equatable {
        var s: String
        var b: Bool
        var i: Int
        var i8: Int8
        var i64: Int64
        var u64: UInt64
        var d: Double
        var f: Float
        var optionalSet: String?
        var optionalNil: Int?
        var date: Date
        var url: URL
        var data: Data
        var color: Color
        var level: Level
        var inner: Inner
        var inners: [Inner]
        var map: [String: Int]
        var nested: [String: [String]]
        var empty: [Int]
        var emptyMap: [String: String]
    }

    static let sample = Everything(
        s: "quote \" backslash \\ newline \n tab \t control \u{01} unicode é ✓ 😀 slash /",
        b: true, i: -42, i8: -128, i64: Int64.max, u64: UInt64.max, d: 3.25, f: 1.5,
        optionalSet: "here", optionalNil: nil, date: Date(timeIntervalSince1970: 1_772_355_600.125),
        url: URL(string: "https://chronir.app/invite/abc?x=1")!, data: Data([0, 1, 2, 255]),
        color: .green, level: .high, inner: Inner(name: "n", tags: ["a", "b"]),
        inners: [Inner(name: "x", tags: []), Inner(name: "y", tags: ["z"])],
        map: ["one": 1, "two": 2], nested: ["k": ["v1", "v2"]], empty: [], emptyMap: [:]
    )

    static func foundationDecoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.dataDecodingStrategy = .base64
        d.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            return ISOTime.parse(text)!
        }
        return d
    }

    static func foundationEncoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(ISOTime.format(date))
        }
        return e
    }

    @Test("what the fast encoder writes, Foundation reads back equal")
    func encodeInterop() throws {
        let bytes = try FastJSONEncoder().encode(Self.sample)
        let back = try Self.foundationDecoder().decode(Everything.self, from: bytes)
        #expect(back == Self.sample)
        #expect(!String(decoding: bytes, as: UTF8.self).contains("optionalNil"))
    }

    @Test("what Foundation writes, the fast decoder reads back equal")
    func decodeInterop() throws {
        let bytes = try Self.foundationEncoder().encode(Self.sample)
        let back = try FastJSONDecoder().decode(Everything.self, from: bytes)
        #expect(back == Self.sample)
        #expect(try FastJSONDecoder().decode(Everything.self, from: FastJSONEncoder().encode(Self.sample)) == Self.sample)
    }

    @Test("top-level scalars, arrays and optionals")
    func scalars() throws {
        #expect(String(decoding: try FastJSONEncoder().encode(5), as: UTF8.self) == "5")
        #expect(String(decoding: try FastJSONEncoder().encode([1, 2]), as: UTF8.self) == "[1,2]")
        #expect(String(decoding: try FastJSONEncoder().encode(Optional<Int>.none), as: UTF8.self) == "null")
        #expect(String(decoding: try FastJSONEncoder().encode(Color.red), as: UTF8.self) == "\"red\"")
        #expect(try FastJSONDecoder().decode([Int?].self, from: Data("[1,null,3]".utf8)) == [1, nil, 3])
        #expect(try FastJSONDecoder().decode(Int.self, from: Data(" 7 ".utf8)) == 7)
        #expect(try FastJSONDecoder().decode(Int.self, from: Data("2.0".utf8)) == 2)
        #expect(try FastJSONDecoder().decode(Double.self, from: Data("-1.5e3".utf8)) == -1500)
        #expect(try FastJSONDecoder().decode(String.self, from: Data(#""\u00e9\ud83d\ude00""#.utf8)) == "é😀")
        #expect(throws: EncodingError.self) { try FastJSONEncoder().encode(Double.nan) }
    }

    @Test("errors carry the coding path", arguments: [
        (#"{"name":"n"}"#, "tags"),
        (#"{"name":"n","tags":[1]}"#, "tags[0]"),
        (#"{"name":null,"tags":[]}"#, "name"),
        (#"{"name":"n","tags":["a","b",3]}"#, "tags[2]"),
    ])
    func errorPaths(_ json: String, _ path: String) {
        do {
            _ = try FastJSONDecoder().decode(Inner.self, from: Data(json.utf8))
            Issue.record("expected a decoding error")
        } catch let error as DecodingError {
            #expect(JSONCoding.describe(error).hasPrefix(path), "\(JSONCoding.describe(error))")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("invalid JSON and out-of-range numbers are errors", arguments: [
        "", "{", "[1,]", "{\"a\":}", "01", "1.", "tru", "\"unterminated", "{\"a\":1}}", "[1 2]", "\"\u{01}\"",
    ])
    func invalid(_ text: String) {
        #expect(throws: DecodingError.self) { try FastJSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) }
    }

    @Test("integers out of range are refused")
    func ranges() {
        #expect(throws: DecodingError.self) { try FastJSONDecoder().decode(Int8.self, from: Data("300".utf8)) }
        #expect(throws: DecodingError.self) { try FastJSONDecoder().decode(Int.self, from: Data("1.5".utf8)) }
        #expect(throws: DecodingError.self) { try FastJSONDecoder().decode(UInt.self, from: Data("-1".utf8)) }
    }

    class Base: Codable {
        var a = 1
    }

    final class Derived: Base, @unchecked Sendable {
        var b = 2
        enum K: String, CodingKey { case b }
        override init() { super.init() }
        required init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: K.self)
            b = try c.decode(Int.self, forKey: .b)
            try super.init(from: c.superDecoder())
        }
        override func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: K.self)
            try c.encode(b, forKey: .b)
            try super.encode(to: c.superEncoder())
        }
    }

    @Test("hand-nested containers fall back to Foundation's encoder")
    func fallback() throws {
        #expect(throws: FastJSONEncoder.Unsupported.self) { try FastJSONEncoder().encode(Derived()) }
        let bytes = try JSONCoding.encode(Derived())
        let value = try FastJSONDecoder().decode(JSONValue.self, from: bytes)
        #expect(value["b"]?.intValue == 2)
        #expect(value["super"]?["a"]?.intValue == 1)
        let back = try FastJSONDecoder().decode(Derived.self, from: bytes)
        #expect(back.a == 1 && back.b == 2)
    }

    @Test("random JSON trees survive encode → Foundation parse and parse → encode")
    func randomTrees() throws {
        var rng = SeededRandom.forTest("FastJSONTests.randomTrees")
        let seed = rng.seed
        func tree(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &rng) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &rng))
            case 2: return .number(Double(Int.random(in: -1_000_000...1_000_000, using: &rng)) / (Bool.random(using: &rng) ? 1 : 8))
            case 3: return .string(String((0..<Int.random(in: 0..<12, using: &rng)).map { _ in "aé\"\\\n✓😀/ \u{7}".randomElement(using: &rng)! }))
            case 4: return .array((0..<Int.random(in: 0..<5, using: &rng)).map { _ in tree(depth + 1) })
            default:
                var o: [String: JSONValue] = [:]
                for k in 0..<Int.random(in: 0..<5, using: &rng) { o["k\(k)\u{e9}"] = tree(depth + 1) }
                return .object(o)
            }
        }
        for n in 0..<500 {
            let t = tree(0)
            let bytes = try FastJSONEncoder().encode(t)
            let foundation = try JSONDecoder().decode(JSONValue.self, from: bytes)
            #expect(foundation == t, "seed \(seed), tree \(n): \(t)")
            let fast = try FastJSONDecoder().decode(JSONValue.self, from: try JSONEncoder().encode(t))
            #expect(fast == t, "seed \(seed), tree \(n): \(t)")
        }
    }
}

/// `JSONMember.raw`: one member's bytes, untouched, without decoding the rest.
@Suite struct JSONMemberTests {
    @Test func takesOneMembersBytesAsTheyAre() throws {
        let data = Data(#"{"seq": 4, "notification": {"id": 7, "title": "a \"b\"\n", "data": {}}, "created": true}"#.utf8)
        #expect(try JSONMember.raw("notification", in: data) == Data(#"{"id": 7, "title": "a \"b\"\n", "data": {}}"#.utf8))
        #expect(try JSONMember.raw("created", in: data) == Data("true".utf8))
        #expect(try JSONMember.raw("missing", in: data) == nil)
        // A slice of a larger buffer reads the same.
        let framed = Data("xx".utf8) + data
        #expect(try JSONMember.raw("seq", in: framed.dropFirst(2)) == Data("4".utf8))
    }

    @Test func refusesWhatIsNotAnObject() {
        #expect(throws: (any Error).self) { try JSONMember.raw("a", in: Data("[1, 2]".utf8)) }
        #expect(throws: (any Error).self) { try JSONMember.raw("a", in: Data(#"{"a": 1"#.utf8)) }
    }
}
