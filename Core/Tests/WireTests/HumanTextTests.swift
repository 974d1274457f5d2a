import Testing
import Wire

@Suite("HumanText: controls refused, and bidirectional controls in single-line fields")
struct HumanTextTests {
    @Test("a single-line field refuses every bidirectional embedding, override and isolate; the marks pass", arguments: Array(0x202A...0x202E) + Array(0x2066...0x2069))
    func bidiRefused(code: Int) throws {
        let spoof = "invoice" + String(Unicode.Scalar(UInt32(code))!) + "fdp.exe"
        #expect(throws: ServiceError.self) { try HumanText.check(spoof, field: "displayName") }
        // A note may hold them (right-to-left text), and reaches no header.
        try HumanText.check(spoof, field: "note", multiline: true)
    }

    @Test("marks, right-to-left letters and ordinary text pass")
    func ordinaryPasses() throws {
        for ok in ["שלום", "مرحبا\u{200F}", "a\u{200E}b", "Zoë 🐈", "\u{061C}x"] {
            try HumanText.check(ok, field: "displayName")
        }
    }

    @Test("the refusal names the character and where it stands")
    func namesIt() {
        do {
            try HumanText.check("ab\u{202E}c", field: "title")
            Issue.record("not refused")
        } catch let error as ServiceError {
            #expect(error.message.contains("U+202E") && error.message.contains("position 2"), "\(error.message)")
        } catch {
            Issue.record("\(error)")
        }
    }
}
