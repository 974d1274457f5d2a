import Foundation
import Logging
@testable import ServiceKit
import Testing
import Wire

/// Issue 57: names that carry CR LF (stored before the input rule, or from any source) cannot
/// inject SMTP commands, headers or log lines.
@Suite("No injection into mail or logs")
struct MailAndLogInjectionTests {
    let attack = "x\r\n.\r\nMAIL FROM:<evil@example.com>\r\nRCPT TO:<victim@example.com>"

    @Test("a body line made of a lone dot after CR LF is dot-stuffed, so the message ends only at the final dot; every line ends in CR LF")
    func bodyDotStuffing() {
        let message = SMTPClient.message(from: "noreply@chronir.test", to: "a@example.com", subject: "Hello", body: "Hello \(attack),\nbye",
                                         messageID: "m1")
        let lines = message.components(separatedBy: "\r\n")
        // One terminating "." line, at the end (before the empty rest after the last CR LF).
        #expect(lines.filter { $0 == "." }.count == 1, "\(lines)")
        #expect(lines.suffix(2) == [".", ""], "\(lines.suffix(3))")
        #expect(lines.contains(".."), "the injected dot line was not stuffed: \(lines)")
        // No bare LF or CR anywhere: each is part of a CR LF pair.
        let bytes = Array(message.utf8)
        for (k, b) in bytes.enumerated() where b == 0x0A { #expect(k > 0 && bytes[k - 1] == 0x0D) }
        for (k, b) in bytes.enumerated() where b == 0x0D { #expect(k + 1 < bytes.count && bytes[k + 1] == 0x0A) }
    }

    @Test("a subject carrying CR LF and non-ASCII text is one header of RFC 2047 encoded words: no Bcc header appears, and it decodes back")
    func subjectEncoding() throws {
        let subject = "Mallory\r\nBcc: everyone@example.com invited you to «Home» 🏠 and a very long group name that goes on and on"
        let message = SMTPClient.message(from: "noreply@chronir.test", to: "a@example.com", subject: subject, body: "b", messageID: "m2")
        let head = message.components(separatedBy: "\r\n\r\n")[0]
        let headers = head.components(separatedBy: "\r\n")
        #expect(!headers.contains { $0.lowercased().hasPrefix("bcc:") }, "\(headers)")
        // Folded continuation lines start with a space; every line is at most 78 characters.
        let subjectLines = headers.drop { !$0.hasPrefix("Subject: ") }.prefix { $0.hasPrefix("Subject: ") || $0.hasPrefix(" ") }
        #expect(subjectLines.allSatisfy { $0.utf8.count <= 78 }, "\(subjectLines)")
        let decoded = subjectLines.map { line in
            line.replacingOccurrences(of: "Subject: ", with: "").trimmingCharacters(in: .whitespaces)
        }.map { word -> String in
            let inner = word.dropFirst("=?UTF-8?B?".count).dropLast(2)
            return String(decoding: Data(base64Encoded: String(inner)) ?? Data(), as: UTF8.self)
        }.joined()
        #expect(decoded == subject.replacingOccurrences(of: "\r\n", with: "  "), "\(decoded)")
        // Plain ASCII stays readable.
        #expect(SMTPClient.headerText("Reset your Chronir password") == "Reset your Chronir password")
    }

    @Test("a recipient or sender that is not one plain address is refused before anything connects")
    func plainAddresses() {
        #expect(SMTPClient.isPlainAddress("a@example.com"))
        for bad in ["a@example.com>\r\nRCPT TO:<b@example.com", "a b@example.com", "", "a@example.com\u{0}", "<a@example.com>"] {
            #expect(!SMTPClient.isPlainAddress(bad), "\(bad.debugDescription)")
        }
    }

    @Test("the text log format escapes control characters of messages and metadata, so a name cannot forge a log line")
    func textLogsEscape() {
        #expect(TextLogHandler.escaped("ok") == "ok")
        #expect(TextLogHandler.escaped("a\r\nlevel=critical msg=forged\u{1b}[2J") == "a\\r\\nlevel=critical msg=forged\\u{1b}[2J")
        let value = TextLogHandler.escaped(Logger.Metadata.Value.string("x\ny"))
        #expect(value.description == "x\\ny")
    }

    @Test("one rule for names and titles: C0, DEL, C1 and the Unicode separators are refused (CA016 naming the field and the character); notes may hold line breaks")
    func humanText() throws {
        for bad in ["x\r\ny", "bell\u{7}", "del\u{7F}", "nel\u{85}", "line\u{2028}sep", "nul\u{0}"] {
            #expect(throws: ServiceError.self) { try HumanText.check(bad, field: "displayName") }
        }
        do {
            try HumanText.check("ab\u{7}", field: "title")
            Issue.record("a bell character passed")
        } catch let e as ServiceError {
            #expect(e.code == .validationFailed && e.message.contains("title") && e.message.contains("U+0007"), "\(e.message)")
        }
        try HumanText.check("Zoë's «groupe» 日本 🏠", field: "displayName")
        try HumanText.check("line one\nline two\r\n\ttabbed", field: "note", multiline: true)
        #expect(throws: ServiceError.self) { try HumanText.check("note\u{0}", field: "note", multiline: true) }
    }
}
