/// The one rule for text people type that other people, mail and logs see: display names,
/// group names and descriptions, alarm titles, categories and notes.
///
/// A single-line field refuses every control character: C0 (U+0000–U+001F, CR and LF among
/// them), DEL, C1 (U+0080–U+009F) and the Unicode line and paragraph separators
/// (U+2028, U+2029), so no name can end a mail header, an SMTP line or a log line. A field that
/// is multi-line by design (notes, descriptions) also takes tab, LF and CR; such a field never
/// reaches a header. Single-line fields refuse the bidirectional controls too (issue 74).
public enum HumanText {
    /// The control characters `multiline` text may still hold.
    static let lineBreaks: Set<Unicode.Scalar> = ["\t", "\n", "\r"]

    /// Whether `scalar` is a control character (C0, DEL, C1, U+2028, U+2029).
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    /// Whether `scalar` is a bidirectional embedding, override or isolate (U+202A–U+202E,
    /// U+2066–U+2069): in a name or a title that reaches a mail subject or another member's
    /// screen, one reverses what follows it ("invoice\u{202E}fdp.exe" reads "invoiceexe.pdf").
    /// The marks (U+200E, U+200F, U+061C) stay: they change no order by themselves.
    public static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    /// Throws `CA016` naming `field` and the first control character (as U+XXXX) and where it
    /// stands, when `value` holds one it may not. A single-line field also refuses
    /// bidirectional controls (``isBidiControl(_:)``); notes and descriptions keep them (text
    /// written right to left may need them, and they reach no header).
    public static func check(_ value: String, field: String, multiline: Bool = false) throws {
        for (k, scalar) in value.unicodeScalars.enumerated() where isControl(scalar) || (!multiline && isBidiControl(scalar)) {
            if multiline, lineBreaks.contains(scalar) { continue }
            let code = String(scalar.value, radix: 16, uppercase: true)
            throw ServiceError(.validationFailed,
                               "\(field) must not contain control characters (U+\(String(repeating: "0", count: max(0, 4 - code.count)) + code) at position \(k))")
        }
    }
}
