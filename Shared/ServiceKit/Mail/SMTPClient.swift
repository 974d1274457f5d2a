import Foundation
import Wire
import NIOCore
import NIOPosix
import NIOSSL

/// An SMTP client (RFC 5321) over SwiftNIO, with TLS: EHLO, STARTTLS (RFC 3207) or implicit TLS
/// (RFC 8314), AUTH PLAIN when the URL has credentials, MAIL FROM, RCPT TO, DATA with
/// dot-stuffing, QUIT; every reply within 30 s.
///
/// `CHRONIR_SMTP_URL`:
/// - `smtps://[user:password@]host[:port]`: TLS from the first byte (port 465 by default);
/// - `smtp://[user:password@]host[:port]` (port 25): STARTTLS, required — a server that does not
///   offer it gets no mail — except for a relay on a loopback address, which may speak plain
///   SMTP (it is on this machine) and is asked for STARTTLS when it offers it;
/// - `?starttls=off` on an `smtp://` URL sends in plain text to a relay that offers no TLS (a
///   private network's relay); it is never the default.
/// Certificates are verified (chain and host name) against the system's roots, plus the PEM
/// roots of `CHRONIR_SMTP_CA_FILE` (a private relay's CA); credentials are sent only under TLS
/// unless the relay is on loopback.
public struct SMTPClient: Sendable {
    /// How the connection is protected.
    public enum Security: String, Sendable {
        /// TLS from the start (`smtps://`).
        case implicitTLS
        /// STARTTLS, or no mail (`smtp://` to anything but loopback).
        case startTLSRequired
        /// STARTTLS when the server offers it (`smtp://` to a loopback relay).
        case startTLSWhenOffered
        /// Plain text (`?starttls=off`).
        case none
    }

    public let host: String
    public let port: Int
    public let username: String?
    public let password: String?
    public let from: String
    public let heloName: String
    public let security: Security
    let tls: NIOSSLContext
    let group: (any EventLoopGroup)?

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    static let usage = "CHRONIR_SMTP_URL must be smtp://[user:password@]host[:port][?starttls=off] or smtps://[user:password@]host[:port]"

    /// Reads `url`; `caFile` adds trusted roots (PEM). Throws ``Failure`` naming the problem.
    public init(url: String, from: String, caFile: String? = nil, heloName: String = "chronir", eventLoopGroup: (any EventLoopGroup)?) throws {
        guard let u = URLComponents(string: url), let scheme = u.scheme, ["smtp", "smtps"].contains(scheme),
              let host = u.host, !host.isEmpty else { throw Failure(Self.usage) }
        let starttls = u.queryItems?.first { $0.name == "starttls" }?.value
        guard starttls == nil || starttls == "off", u.queryItems?.contains(where: { $0.name != "starttls" }) != true else {
            throw Failure(Self.usage)
        }
        let loopback = ["127.0.0.1", "::1", "localhost"].contains(host.lowercased()) || host.hasPrefix("127.")
        if scheme == "smtps" {
            guard starttls == nil else { throw Failure("CHRONIR_SMTP_URL: smtps:// is TLS from the start; starttls=off does not apply") }
            security = .implicitTLS
        } else if starttls == "off" {
            security = .none
        } else {
            security = loopback ? .startTLSWhenOffered : .startTLSRequired
        }
        self.host = host
        self.port = u.port ?? (scheme == "smtps" ? 465 : 25)
        self.username = u.user?.removingPercentEncoding
        self.password = u.password?.removingPercentEncoding
        if username != nil, security == .none, !loopback {
            throw Failure("CHRONIR_SMTP_URL: credentials are not sent in plain text to a remote relay; drop starttls=off")
        }
        self.from = from
        self.heloName = heloName
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        if let caFile {
            do {
                configuration.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(caFile))]
            } catch {
                throw Failure("CHRONIR_SMTP_CA_FILE \(caFile): \(error)")
            }
        }
        tls = try NIOSSLContext(configuration: configuration)
        group = eventLoopGroup
    }

    /// Sends one plain-text message. A recipient that is not one plain address (a control
    /// character, a space, `<`, `>`) is refused before anything connects: it would end the
    /// `RCPT TO` line.
    public func send(to recipient: String, subject: String, body: String, messageID: String) async throws {
        guard let group else { throw Failure("this SMTP client only checked its settings; it has no event loops to send with") }
        guard Self.isPlainAddress(recipient), Self.isPlainAddress(from) else {
            throw Failure("refused to send to \(recipient.debugDescription): not a plain address")
        }
        let session = try await SMTPSession.connect(host: host, port: port, tls: security == .implicitTLS ? tls : nil, group: group)
        // Cancelled (a caller's deadline, ``MailSender``): the connection closes at once, which
        // fails the reply being waited for — the session does not go on talking to the relay.
        try await withTaskCancellationHandler {
            do {
                try await dialogue(session, recipient: recipient, subject: subject, body: body, messageID: messageID)
                await session.close()
            } catch {
                await session.close()
                throw error
            }
        } onCancel: {
            session.channel.close(promise: nil)
        }
    }

    /// Whether `address` can stand in `MAIL FROM:<…>`, `RCPT TO:<…>` and a header as it is:
    /// non-empty, with no control character, space, `<` or `>`.
    static func isPlainAddress(_ address: String) -> Bool {
        !address.isEmpty && address.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F && !"<>".unicodeScalars.contains($0) }
            && !address.unicodeScalars.contains { (0x80...0x9F).contains($0.value) || $0.value == 0x2028 || $0.value == 0x2029 }
    }

    private func dialogue(_ s: SMTPSession, recipient: String, subject: String, body: String, messageID: String) async throws {
        try await s.expect(220, after: "connect")
        var features = try await s.command("EHLO \(heloName)", expect: 250)
        let offered = features.contains { $0.uppercased().hasPrefix("STARTTLS") }
        switch security {
        case .startTLSRequired where !offered:
            throw Failure("\(host):\(port) does not offer STARTTLS; no mail is sent in plain text to a remote relay (CHRONIR_SMTP_URL)")
        case .startTLSRequired, .startTLSWhenOffered where offered:
            _ = try await s.command("STARTTLS", expect: 220)
            try await s.startTLS(tls, serverHostname: host)
            features = try await s.command("EHLO \(heloName)", expect: 250)
        default:
            break
        }
        _ = features
        if let username, let password {
            let token = Data("\0\(username)\0\(password)".utf8).base64EncodedString()
            _ = try await s.command("AUTH PLAIN \(token)", expect: 235, redacted: "AUTH PLAIN")
        }
        _ = try await s.command("MAIL FROM:<\(from)>", expect: 250)
        _ = try await s.command("RCPT TO:<\(recipient)>", expect: 250, 251)
        _ = try await s.command("DATA", expect: 354)
        try await s.write(Self.message(from: from, to: recipient, subject: subject, body: body, messageID: messageID))
        try await s.expect(250, after: "DATA")
        _ = try? await s.command("QUIT", expect: 221)
    }

    /// The RFC 5322 message, dot-stuffed and ended with `.` (what follows `DATA`).
    ///
    /// The subject is one header line whatever it holds: printable ASCII as it is, anything else
    /// as RFC 2047 encoded words (`=?UTF-8?B?…?=`, folded), so a CR, LF or other control character
    /// in a name it carries can never start a header or end the message. The body's lines are
    /// split on Unicode scalars (LF, CR LF or a lone CR: `"\r\n"` is one Swift `Character`),
    /// sent as CR LF, and a line that starts with `.` is dot-stuffed.
    static func message(from: String, to recipient: String, subject: String, body: String, messageID: String, date: Date = Date()) -> String {
        var message = "From: Chronir <\(from)>\r\nTo: <\(recipient)>\r\nSubject: \(headerText(subject))\r\nDate: \(DateFormatter.rfc5322.string(from: date))\r\n"
        message += "Message-ID: <\(messageID)@chronir>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
        message += "Content-Transfer-Encoding: 8bit\r\n\r\n"
        for line in bodyLines(body) {
            message += (line.hasPrefix(".") ? "." : "") + line + "\r\n"
        }
        return message + ".\r\n"
    }

    /// `text`'s lines, split at LF, CR LF and lone CR (on scalars, not `Character`s).
    static func bodyLines(_ text: String) -> [String] {
        var lines: [String] = []
        var line = String.UnicodeScalarView()
        var afterCR = false
        for scalar in text.unicodeScalars {
            if scalar == "\n", afterCR { afterCR = false; continue }
            afterCR = scalar == "\r"
            if scalar == "\n" || scalar == "\r" {
                lines.append(String(line))
                line = String.UnicodeScalarView()
            } else {
                line.append(scalar)
            }
        }
        lines.append(String(line))
        return lines
    }

    /// A header's text: as it is when it is printable ASCII (and short), otherwise RFC 2047
    /// `B` encoded words of at most 39 bytes of UTF-8 each (64 characters with their frame; a
    /// folded line stays under 78), cut
    /// between scalars and folded with CR LF and a space. Control characters become spaces first.
    static func headerText(_ text: String) -> String {
        let cleaned = String(String.UnicodeScalarView(text.unicodeScalars.map { HumanText.isControl($0) ? " " : $0 }))
        if cleaned.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) }), cleaned.utf8.count <= 900, !cleaned.contains("=?") {
            return cleaned
        }
        var words: [String] = []
        var chunk: [UInt8] = []
        for scalar in cleaned.unicodeScalars {
            let bytes = Array(String(scalar).utf8)
            if chunk.count + bytes.count > 39 {
                words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=")
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=") }
        return words.joined(separator: "\r\n ")
    }
}

extension DateFormatter {
    /// RFC 5322 dates (`Sat, 28 Nov 2026 09:00:00 +0000`).
    static var rfc5322: DateFormatter {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        return f
    }
}
