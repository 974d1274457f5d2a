import Foundation
import Wire
import Testing

/// The coding paths user code sees in the fast coders, which keep one shared stack of keys per
/// encoding or decoding (no `codingPath + [key]` per nested value).
@Suite("Fast JSON coding paths")
struct FastJSONPathTests {
    /// Fails with the coding path it was decoded (or encoded) at.
    struct Probe: Codable {
        init() {}
        init(from decoder: any Decoder) throws {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "probe"))
        }
        func encode(to encoder: any Encoder) throws {
            throw EncodingError.invalidValue(0, .init(codingPath: encoder.codingPath, debugDescription: "probe"))
        }
    }

    struct Item: Codable {
        var x: Int
        var probe: Probe?
    }

    struct Outer: Codable {
        var name: String
        var items: [Item]
        var tail: [String: [Int]]
    }

    static func keys(_ path: [any CodingKey]) -> [String] {
        path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
    }

    @Test("a nested value's decoder sees its whole path, after siblings decoded before it")
    func decoderPaths() throws {
        let json = #"{"name":"n","tail":{"k":[1]},"items":[{"x":1},{"x":2},{"x":3,"probe":0}]}"#
        do {
            _ = try FastJSONDecoder().decode(Outer.self, from: Data(json.utf8))
            Issue.record("expected the probe to fail")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(Self.keys(context.codingPath) == ["items", "[2]", "probe"])
        }
        // The same bytes without the probe decode whole, and a type error deep inside names its path.
        let fine = try FastJSONDecoder().decode(Outer.self, from: Data(json.replacingOccurrences(of: #","probe":0"#, with: "").utf8))
        #expect(fine.items.map(\.x) == [1, 2, 3] && fine.tail == ["k": [1]])
        do {
            _ = try FastJSONDecoder().decode(Outer.self, from: Data(#"{"name":"n","items":[],"tail":{"k":[1,"2"]}}"#.utf8))
            Issue.record("expected a type mismatch")
        } catch DecodingError.typeMismatch(_, let context) {
            #expect(Self.keys(context.codingPath) == ["tail", "k", "[1]"])
        }
    }

    /// Keeps a nested container and reads it after its parent moved on to other members.
    struct Kept: Decodable {
        enum K: String, CodingKey { case a, b, c }
        enum Inner: String, CodingKey { case v }
        var a: Int, c: Int
        init(from decoder: any Decoder) throws {
            let root = try decoder.container(keyedBy: K.self)
            let kept = try root.nestedContainer(keyedBy: Inner.self, forKey: .b)
            a = try root.decode(Int.self, forKey: .a)
            c = try root.decode(Int.self, forKey: .c)
            _ = try kept.decode(Probe.self, forKey: .v)
            Issue.record("the probe decodes nothing")
        }
    }

    @Test("a container kept past its siblings still reports its own path")
    func keptContainer() {
        do {
            _ = try FastJSONDecoder().decode([Kept].self, from: Data(#"[{"a":1,"b":{"v":0},"c":3}]"#.utf8))
            Issue.record("expected the probe to fail")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(Self.keys(context.codingPath) == ["[0]", "b", "v"])
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("a nested value's encoder sees its keyed path")
    func encoderPaths() {
        let value = Outer(name: "n", items: [Item(x: 1), Item(x: 2, probe: Probe())], tail: [:])
        do {
            _ = try FastJSONEncoder().encode(value)
            Issue.record("expected the probe to fail")
        } catch EncodingError.invalidValue(_, let context) {
            // The fast encoder's arrays add no index keys (Foundation's do).
            #expect(Self.keys(context.codingPath) == ["items", "probe"])
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(throws: EncodingError.self) { try FastJSONEncoder().encode(["k": [1.0, .infinity]]) }
    }

    @Test("strings, integers and booleans inside generic containers read and write as themselves")
    func primitivesThroughGenerics() throws {
        let value: [String: [Int64]] = ["a": [Int64.max, -1]]
        let bytes = try FastJSONEncoder().encode(value)
        #expect(try FastJSONDecoder().decode([String: [Int64]].self, from: bytes) == value)
        #expect(String(decoding: try FastJSONEncoder().encode([[true], [false]]), as: UTF8.self) == "[[true],[false]]")
        #expect(try FastJSONDecoder().decode([[String]].self, from: Data(#"[["a\n"],[]]"#.utf8)) == [["a\n"], []])
        #expect(try FastJSONDecoder().decode([Double].self, from: Data("[1, 2.5]".utf8)) == [1, 2.5])
        do {
            _ = try FastJSONDecoder().decode([String: [Int]].self, from: Data(#"{"k":[1,"x"]}"#.utf8))
            Issue.record("expected a type mismatch")
        } catch DecodingError.typeMismatch(_, let context) {
            #expect(Self.keys(context.codingPath) == ["k", "[1]"])
        }
    }
}
