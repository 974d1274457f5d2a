import Foundation
import Schedules
import Testing

/// RFC 5545 TEXT escaping (issue 74): whatever a title or note holds stays inside its content
/// line. `"\r\n"` is one `Character` in Swift, equal to neither `"\r"` nor `"\n"`: an escape that
/// walked `Character`s let it through whole, and a note could inject events.
@Suite("iCalendar escaping")
struct ICalendarEscapeTests {
    @Test("every line break a reader may honour becomes \\n, once", arguments: [
        ("a\r\nb", "a\\nb"), ("a\nb", "a\\nb"), ("a\rb", "a\\nb"), ("a\r\rb", "a\\n\\nb"), ("a\n\rb", "a\\n\\nb"),
        ("a\u{85}b", "a\\nb"), ("a\u{2028}b", "a\\nb"), ("a\u{2029}b", "a\\nb"), ("\r\n\r\n", "\\n\\n"),
    ])
    func lineBreaks(input: String, expected: String) {
        #expect(ICalendar.escape(input) == expected)
    }

    @Test("backslash, semicolon and comma are escaped; a tab is kept; other control characters are dropped", arguments: [
        ("a\\b", "a\\\\b"), ("a;b", "a\\;b"), ("a,b", "a\\,b"), ("a\tb", "a\tb"), ("a\u{0}b\u{1B}c\u{7F}d", "abcd"),
        ("Café 🎉 — ünïcödé", "Café 🎉 — ünïcödé"), ("e\u{301}", "e\u{301}"),
    ])
    func specials(input: String, expected: String) {
        #expect(ICalendar.escape(input) == expected)
    }

    @Test("what an attacker writes in a note: a whole event after CR LF stays one escaped line")
    func injection() {
        let note = "Rent\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:victim@chronir.app\r\nSTATUS:CANCELLED\r\nDTSTART:20300101T000000Z\r\nEND:VEVENT"
        let line = "DESCRIPTION:" + ICalendar.escape(note)
        #expect(!line.unicodeScalars.contains { $0 == "\r" || $0 == "\n" })
        // Folded, the only line breaks are the folds' CR LF + space.
        let folded = ICalendar.fold(line)
        #expect(folded.components(separatedBy: "\r\n").dropFirst().allSatisfy { $0.hasPrefix(" ") })
    }

    @Test("no generated text leaves a raw line break or control character in the escaped value")
    func property() {
        var rng = SystemRandomNumberGenerator()
        let pool: [Unicode.Scalar] = ["a", "Z", " ", "\\", ";", ",", "\r", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "\u{85}",
                                      "\u{2028}", "\u{2029}", "é", "\u{301}", "🎉", ":"]
        for _ in 0..<2_000 {
            var s = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...24, using: &rng) { s.append(pool.randomElement(using: &rng)!) }
            let out = ICalendar.escape(String(s))
            let bad = out.unicodeScalars.first { $0 != "\t" && ($0.properties.generalCategory == .control || $0 == "\u{2028}" || $0 == "\u{2029}") }
            #expect(bad == nil, "\(String(s).debugDescription) → \(out.debugDescription)")
        }
    }
}
