import Foundation
import Support

/// A local SMTP server (Python's aiosmtpd, from the venv `scripts/test.sh` makes) that stores
/// what it receives in a Maildir. With `tls`, it holds a certificate for `localhost` and
/// 127.0.0.1 (made by openssl, its CA file at ``certFile``) and either requires STARTTLS before
/// any mail (`.startTLS`) or speaks TLS from the first byte (`.implicit`).
final class LocalSMTPServer: Sendable {
    enum TLS: Sendable {
        case none, startTLS, implicit
    }

    let port = freePort()
    let maildir = FileManager.default.temporaryDirectory.appendingPathComponent("smtp-\(UUID().uuidString)")
    let process: TestProcess
    /// The server's self-signed certificate (PEM), to trust as a CA; nil without TLS.
    let certFile: String?

    init(tls: TLS = .none) throws {
        let python = ProcessInfo.processInfo.environment["CHRONIR_TEST_PYTHON"] ?? "/usr/bin/python3"
        var arguments = ["-m", "aiosmtpd", "-n", "-l", "127.0.0.1:\(port)"]
        if tls != .none {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("smtp-tls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let certificate = try TestCertificate(in: dir)
            let (cert, key) = (certificate.certFile, certificate.keyFile)
            arguments += tls == .startTLS ? ["--tlscert", cert, "--tlskey", key] : ["--smtpscert", cert, "--smtpskey", key]
            certFile = cert
        } else {
            certFile = nil
        }
        arguments += ["-c", "aiosmtpd.handlers.Mailbox", maildir.path]
        process = try TestProcess(url: URL(fileURLWithPath: python), arguments, label: "aiosmtpd")
    }

    var url: String { "smtp://127.0.0.1:\(port)" }

    /// Every message received so far (raw RFC 5322 text).
    var messages: [String] {
        let dir = maildir.appendingPathComponent("new")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return files.sorted().compactMap { try? String(contentsOfFile: dir.appendingPathComponent($0).path, encoding: .utf8) }
    }

    /// The messages to `recipient` with `subject`.
    func messages(to recipient: String, subject: String) -> [String] {
        messages.filter { $0.contains("To: <\(recipient)>") && $0.contains("Subject: \(subject)") }
    }

    /// The token a mail carries (in its link's fragment).
    static func token(in message: String) -> String? {
        // The link's fragment (`/app/#/reset/<token>`, `/app/#/verify/<token>`).
        guard let r = message.range(of: #"#/(reset|verify)/[A-Za-z0-9_-]+"#, options: .regularExpression) else { return nil }
        return String(message[r].split(separator: "/").last ?? "")
    }

    func stop() async { await process.terminate() }
}
