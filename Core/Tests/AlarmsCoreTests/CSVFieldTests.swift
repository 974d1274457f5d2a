import AlarmsCore
import Foundation
import Testing

/// The completions CSV (issue 74): whatever a note holds stays in its field. `"\r\n"` is one
/// `Character`, equal to neither `"\r"` nor `"\n"`: a check over `Character`s left such a note
/// unquoted, so it ended the row and its next line, a row of the attacker's, passed the
/// formula guard.
@Suite("CSV fields")
struct CSVFieldTests {
    @Test("a field with a line break of any kind, a comma or a quote is quoted", arguments: [
        ("a\r\nb", "\"a\r\nb\""), ("a\nb", "\"a\nb\""), ("a\rb", "\"a\rb\""), ("a,b", "\"a,b\""), ("say \"hi\"", "\"say \"\"hi\"\"\""),
        ("plain", "plain"),
    ])
    func quoting(input: String, expected: String) {
        #expect(CSVField.escape(input) == expected)
    }

    @Test("a leading formula character, tab or CR is defused", arguments: [
        ("=1+1", "'=1+1"), ("+1", "'+1"), ("-1", "'-1"), ("@SUM(A1)", "'@SUM(A1)"), ("\t=1", "'\t=1"), ("\r\n=1", "\"'\r\n=1\""),
    ])
    func formulas(input: String, expected: String) {
        #expect(CSVField.escape(input) == expected)
    }

    @Test("what an attacker writes in a note: CR LF and a row of its own stay inside one quoted field")
    func injectedRow() {
        let field = CSVField.escape("done\r\n=1+1 @SUM(A1:A9)")   // no comma or quote to trigger the quoting
        #expect(field.hasPrefix("\"") && field.hasSuffix("\""))
        // Outside the quotes nothing is left: every line break is inside the field.
        #expect(field.dropFirst().dropLast().replacingOccurrences(of: "\"\"", with: "").contains("\"") == false)
    }
}
