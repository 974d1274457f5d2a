import Foundation

/// A plain SMTP client (RFC 5321) for the account mails: EHLO, AUTH PLAIN when the URL has
/// credentials, MAIL FROM, RCPT TO, DATA with dot-stuffing, QUIT. Blocking socket I/O with 10 s
/// timeouts: run it off the async executors (the accounts service's thread pool does).
///
/// `CHRONIR_SMTP_URL` is `smtp://[user:password@]host[:port]` (port 25 by default). TLS is left
/// to a local relay (`smtp://127.0.0.1:25` on the host, or a mail sidecar in compose):
/// STARTTLS and `smtps://` are not implemented, and a URL asking for them is refused at start.
struct SMTPClient: Sendable {
    let host: String
    let port: Int
    let username: String?
    let password: String?
    let from: String
    let heloName: String

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(url: String, from: String, heloName: String = "chronir") throws {
        guard let u = URLComponents(string: url), u.scheme == "smtp", let host = u.host, !host.isEmpty else {
            throw Failure(description: "CHRONIR_SMTP_URL must be smtp://[user:password@]host[:port] (TLS through a local relay)")
        }
        self.host = host
        self.port = u.port ?? 25
        self.username = u.user?.removingPercentEncoding
        self.password = u.password?.removingPercentEncoding
        self.from = from
        self.heloName = heloName
    }

    /// Sends one plain-text message.
    func send(to recipient: String, subject: String, body: String, messageID: String) throws {
        let connection = try Connection(host: host, port: port)
        defer { connection.close() }
        try connection.expect(220)
        try connection.command("EHLO \(heloName)", expect: 250)
        if let username, let password {
            let token = Data("\0\(username)\0\(password)".utf8).base64EncodedString()
            try connection.command("AUTH PLAIN \(token)", expect: 235)
        }
        try connection.command("MAIL FROM:<\(from)>", expect: 250)
        try connection.command("RCPT TO:<\(recipient)>", expect: 250, 251)
        try connection.command("DATA", expect: 354)
        let date = DateFormatter.rfc5322.string(from: Date())
        var message = "From: Chronir <\(from)>\r\nTo: <\(recipient)>\r\nSubject: \(subject)\r\nDate: \(date)\r\n"
        message += "Message-ID: <\(messageID)@chronir>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
        message += "Content-Transfer-Encoding: 8bit\r\n\r\n"
        for line in body.split(separator: "\n", omittingEmptySubsequences: false) {
            let text = line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
            message += (text.hasPrefix(".") ? "." : "") + text + "\r\n"
        }
        try connection.write(message + ".\r\n")
        try connection.expect(250)
        try? connection.command("QUIT", expect: 221)
    }

    /// One TCP connection speaking SMTP's reply lines.
    private final class Connection {
        private let fd: Int32
        private var buffer = [UInt8]()

        init(host: String, port: Int) throws {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
                throw Failure(description: "cannot resolve \(host)")
            }
            defer { freeaddrinfo(list) }
            var cursor: UnsafeMutablePointer<addrinfo>? = first
            var connected: Int32 = -1
            while let a = cursor {
                let s = socket(a.pointee.ai_family, a.pointee.ai_socktype, a.pointee.ai_protocol)
                if s >= 0 {
                    var timeout = timeval(tv_sec: 10, tv_usec: 0)
                    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                    if connect(s, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0 {
                        connected = s
                        break
                    }
                    Glibc.close(s)
                }
                cursor = a.pointee.ai_next
            }
            guard connected >= 0 else { throw Failure(description: "cannot connect to \(host):\(port)") }
            fd = connected
        }

        func close() { Glibc.close(fd) }

        func write(_ text: String) throws {
            let bytes = Array(text.utf8)
            let total = bytes.count
            var sent = 0
            while sent < total {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + sent, total - sent) }
                guard n > 0 else { throw Failure(description: "the SMTP server closed the connection") }
                sent += n
            }
        }

        func command(_ line: String, expect codes: Int...) throws {
            try write(line + "\r\n")
            try expect(codes, after: line.hasPrefix("AUTH") ? "AUTH PLAIN" : line)
        }

        func expect(_ codes: Int...) throws { try expect(codes, after: "connect") }

        /// Reads one reply (its continuation lines too) and checks its code.
        private func expect(_ codes: [Int], after what: String) throws {
            while true {
                let line = try readLine()
                guard line.count >= 3, let code = Int(line.prefix(3)) else { throw Failure(description: "bad SMTP reply: \(line)") }
                if line.count > 3 && line[line.index(line.startIndex, offsetBy: 3)] == "-" { continue }
                guard codes.contains(code) else { throw Failure(description: "\(what): \(line)") }
                return
            }
        }

        private func readLine() throws -> String {
            while true {
                if let i = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = buffer[..<i]
                    buffer.removeSubrange(...i)
                    return String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
                }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, 4096) }
                guard n > 0 else { throw Failure(description: "the SMTP server closed the connection or timed out") }
                buffer.append(contentsOf: chunk[..<n])
            }
        }
    }
}

extension DateFormatter {
    /// `Tue, 24 Nov 2026 21:00:00 +0000`.
    static var rfc5322: DateFormatter {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        return f
    }
}
