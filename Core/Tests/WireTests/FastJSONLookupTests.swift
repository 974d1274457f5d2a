import Foundation
import Wire
import Testing

/// The decoder reads members where they lie in the input (no tree): lookups start where the
/// last one ended, so these check the orders and shapes that could defeat that.
@Suite("Fast JSON member lookups")
struct FastJSONLookupTests {
    struct Three: Decodable, Equatable {
        var a: String
        var b: Int
        var c: [Bool]
    }

    struct Sparse: Decodable, Equatable {
        var a: String?
        var b: Int?
        var c: Bool?
        var d: Three?
    }

    @Test("members in any order, with unknown ones between", arguments: [
        #"{"a":"x","b":1,"c":[true]}"#,
        #"{"c":[true],"b":1,"a":"x"}"#,
        #"{"zz":{"a":"no","b":2,"c":[]},"b":1,"yy":[1,{"a":3}],"c":[true],"a":"x"}"#,
        #"{"b":1,"a":"x","c":[true],"a2":"x"}"#,
    ])
    func anyOrder(_ json: String) throws {
        #expect(try FastJSONDecoder().decode(Three.self, from: Data(json.utf8)) == Three(a: "x", b: 1, c: [true]))
    }

    @Test("a repeated name keeps its last value, wherever the lookup starts")
    func duplicates() throws {
        let json = #"{"a":"first","b":1,"c":[],"a":"last","b":2}"#
        #expect(try FastJSONDecoder().decode(Three.self, from: Data(json.utf8)) == Three(a: "last", b: 2, c: []))
        // Many names, so the cheap filter is hit without a repeat too.
        let many = (0..<40).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
        let map = try FastJSONDecoder().decode([String: Int].self, from: Data("{\(many),\"k7\":700}".utf8))
        #expect(map.count == 40)
        #expect(map["k7"] == 700)
        #expect(map["k39"] == 39)
        // The same name written once plainly and once escaped, either way round.
        #expect(try FastJSONDecoder().decode([String: Int].self, from: Data(#"{"a":1,"\u0061":2}"#.utf8)) == ["a": 2])
        #expect(try FastJSONDecoder().decode([String: Int].self, from: Data(#"{"\u0061":1,"a":2}"#.utf8)) == ["a": 2])
        // A large object whose names collide in the filter without repeating.
        let large = (0..<300).map { #""a\#(String(format: "%04d", $0))a":\#($0)"# }.joined(separator: ",")
        let read = try FastJSONDecoder().decode([String: Int].self, from: Data("{\(large),\"a0042a\":-1}".utf8))
        #expect(read.count == 300)
        #expect(read["a0042a"] == -1)
        #expect(read["a0299a"] == 299)
    }

    @Test("names and values with escapes compare by their text")
    func escapedNames() throws {
        let json = #"{"\u0061":"x\n","b":1,"c":[true]}"#
        #expect(try FastJSONDecoder().decode(Three.self, from: Data(json.utf8)) == Three(a: "x\n", b: 1, c: [true]))
        #expect(try FastJSONDecoder().decode([String: String].self, from: Data(#"{"\"q\"":"\/"}"#.utf8)) == ["\"q\"": "/"])
    }

    @Test("absent and null optionals, and an object read twice")
    func optionals() throws {
        let decoder = FastJSONDecoder()
        #expect(try decoder.decode(Sparse.self, from: Data("{}".utf8)) == Sparse())
        #expect(try decoder.decode(Sparse.self, from: Data(#"{"d":null,"a":null,"c":false}"#.utf8)) == Sparse(c: false))
        let nested = #"{"d":{"c":[false,true],"a":"in","b":-3},"b":9}"#
        #expect(try decoder.decode(Sparse.self, from: Data(nested.utf8)) == Sparse(b: 9, d: Three(a: "in", b: -3, c: [false, true])))
        #expect(throws: DecodingError.self) { try decoder.decode(Sparse.self, from: Data(#"{"b":"nine"}"#.utf8)) }
    }

    @Test("strings are checked where they are skipped too", arguments: [
        #"{"a":"x","b":1,"c":[],"unused":"bad \q escape"}"#,
        #"{"a":"x","b":1,"c":[],"unused":"\u12"}"#,
        "{\"a\":\"x\",\"b\":1,\"c\":[],\"unused\":\"tab\tinside\"}",
        #"{"a":"x","b":1,"c":[],"unused":"\ud800"}"#,
        #"{"a":"x","b":1,"c":[],"unused":"\ud800\u0041"}"#,
        #"{"a":"x","b":1,"c":[],"unused":"\udc00"}"#,
        #"{"a":"x","b":1,"c":[],"k\ud800":1}"#,
    ])
    func unreadStringsChecked(_ json: String) {
        #expect(throws: DecodingError.self) { try FastJSONDecoder().decode(Three.self, from: Data(json.utf8)) }
    }

    @Test("whole numbers read from their digits, at the edges of each type")
    func integers() throws {
        let decoder = FastJSONDecoder()
        #expect(try decoder.decode([Int64].self, from: Data("[9223372036854775807,-9223372036854775808,0,-0]".utf8))
            == [Int64.max, Int64.min, 0, 0])
        #expect(try decoder.decode(UInt64.self, from: Data("18446744073709551615".utf8)) == UInt64.max)
        #expect(throws: DecodingError.self) { try decoder.decode(Int64.self, from: Data("9223372036854775808".utf8)) }
        #expect(throws: DecodingError.self) { try decoder.decode(UInt8.self, from: Data("256".utf8)) }
        #expect(try decoder.decode(Int.self, from: Data("1e2".utf8)) == 100)
        #expect(try decoder.decode(Double.self, from: Data("12345678901234567890".utf8)) == 12345678901234567890.0)
        #expect(try decoder.decode(Double.self, from: Data("-7".utf8)) == -7)
        #expect(try decoder.decode(Double.self, from: Data("-0".utf8)).sign == .minus)
        #expect(try decoder.decode(String.self, from: Data(#""\ud83d\ude00""#.utf8)) == "😀")
    }

    @Test("a slice of a larger buffer decodes from its own start")
    func slices() throws {
        let whole = Data(#"xx{"a":"s","b":2,"c":[]}yy"#.utf8)
        let slice = whole[whole.startIndex + 2 ..< whole.endIndex - 2]
        #expect(try FastJSONDecoder().decode(Three.self, from: slice) == Three(a: "s", b: 2, c: []))
    }
}
