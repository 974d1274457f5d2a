import NIOCore
import NIOPosix
import NIOSSL

/// One SMTP connection: writes command lines and reads replies (multi-line ones whole), each
/// within 30 s; TLS from the start or added by STARTTLS. Used by ``SMTPClient``.
struct SMTPSession: Sendable {
    let channel: any Channel
    /// Used only on the channel's event loop.
    let replies: SMTPReplyHandler
    static let timeout = TimeAmount.seconds(30)

    static func connect(host: String, port: Int, tls: NIOSSLContext?, group: any EventLoopGroup) async throws -> SMTPSession {
        // The reply handler is kept from here, not looked up in the pipeline afterwards: a TLS
        // handshake refused at once closes the channel and empties its pipeline before a lookup
        // (which then failed with ChannelPipelineError.notFound instead of the TLS error).
        let replies = SMTPReplyHandler()
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        let handler = try NIOSSLClientHandler(context: tls, serverHostname: Self.sniName(host))
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                    try channel.pipeline.syncOperations.addHandler(replies)
                }
            }
            .connect(host: host, port: port).get()
        return SMTPSession(channel: channel, replies: replies)
    }

    /// The name to send (SNI) and check the certificate against: nil for an IP address, whose
    /// certificate is checked against the address NIOSSL connected to.
    static func sniName(_ host: String) -> String? {
        host.allSatisfy { $0.isNumber || $0 == "." } || host.contains(":") ? nil : host
    }

    /// Upgrades the connection to TLS (after the server's 220 to STARTTLS).
    func startTLS(_ context: NIOSSLContext, serverHostname host: String) async throws {
        let handler = try NIOSSLClientHandler(context: context, serverHostname: Self.sniName(host))
        try await channel.pipeline.addHandler(handler, position: .first).get()
    }

    func write(_ text: String) async throws {
        do {
            try await channel.writeAndFlush(ByteBuffer(string: text)).get()
        } catch {
            // A write fails because the connection went (a TLS handshake refused, say): the
            // reason is what closed it.
            let replies = self.replies
            let cause = try? await channel.eventLoop.submit { replies.failureText }.get()
            throw SMTPClient.Failure(cause ?? "SMTP connection: \(error)")
        }
    }

    /// Sends `line` and reads its reply, which must have one of `codes`; answers its lines.
    func command(_ line: String, expect codes: Int..., redacted: String? = nil) async throws -> [String] {
        try await write(line + "\r\n")
        return try await expect(codes, after: redacted ?? line)
    }

    @discardableResult
    func expect(_ codes: Int..., after what: String) async throws -> [String] {
        try await expect(codes, after: what)
    }

    private func expect(_ codes: [Int], after what: String) async throws -> [String] {
        let replies = self.replies
        let loop = channel.eventLoop
        let reply: SMTPReplyHandler.Reply
        do {
            reply = try await loop.flatSubmit { replies.next(on: loop, timeout: Self.timeout) }.get()
        } catch let e as SMTPClient.Failure {
            throw SMTPClient.Failure("\(what): \(e.description)")
        }
        guard codes.contains(reply.code) else {
            throw SMTPClient.Failure("\(what): \(reply.lines.joined(separator: " / "))")
        }
        return reply.lines.map { String($0.dropFirst(4)) }
    }

    func close() async {
        try? await channel.close().get()
    }
}

/// Collects the server's reply lines into replies (`250-…` continues, `250 …` ends one) and
/// hands them to whoever waits, in order; a closed connection or an error fails the waiters.
/// Used only on its channel's event loop (the handler, its timers and `next`), hence unchecked.
final class SMTPReplyHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer

    struct Reply: Sendable {
        var code: Int
        var lines: [String]
    }

    private var partial: [UInt8] = []
    private var lines: [String] = []
    private var ready: [Reply] = []
    private var waiting: [(EventLoopPromise<Reply>, Scheduled<Void>)] = []
    private var failure: (any Error)?

    /// Why the connection failed, if it did. Read on the event loop.
    var failureText: String? { failure.map { "\($0)" } }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        partial += buffer.readBytes(length: buffer.readableBytes) ?? []
        // Bytes, not a String: "\r\n" is one Character, which a search for "\n" never finds.
        while let nl = partial.firstIndex(of: UInt8(ascii: "\n")) {
            var bytes = partial[..<nl]
            partial.removeSubrange(...nl)
            if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
            let line = String(decoding: bytes, as: UTF8.self)
            lines.append(line)
            guard line.count >= 3, let code = Int(line.prefix(3)) else {
                fail(SMTPClient.Failure("bad SMTP reply: \(line)"))
                context.close(promise: nil)
                return
            }
            let more = line.count > 3 && line[line.index(line.startIndex, offsetBy: 3)] == "-"
            if !more {
                ready.append(Reply(code: code, lines: lines))
                lines = []
            }
        }
        deliver()
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(SMTPClient.Failure("the SMTP server closed the connection"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(SMTPClient.Failure("SMTP connection: \(error)"))
        context.close(promise: nil)
    }

    /// The next reply, failed after `timeout`. Call on the channel's event loop, `loop`.
    func next(on loop: any EventLoop, timeout: TimeAmount) -> EventLoopFuture<Reply> {
        let promise = loop.makePromise(of: Reply.self)
        if !ready.isEmpty {
            promise.succeed(ready.removeFirst())
        } else if let failure {
            promise.fail(failure)
        } else {
            let timer = loop.scheduleTask(in: timeout) { [weak self] () -> Void in
                self?.expire(promise)
            }
            waiting.append((promise, timer))
        }
        return promise.futureResult
    }

    private func expire(_ promise: EventLoopPromise<Reply>) {
        guard let i = waiting.firstIndex(where: { $0.0.futureResult === promise.futureResult }) else { return }
        waiting.remove(at: i)
        promise.fail(SMTPClient.Failure("the SMTP server did not answer within 30 s"))
    }

    private func deliver() {
        while !ready.isEmpty, !waiting.isEmpty {
            let (promise, timer) = waiting.removeFirst()
            timer.cancel()
            promise.succeed(ready.removeFirst())
        }
    }

    private func fail(_ error: any Error) {
        if failure == nil { failure = error }
        let all = waiting
        waiting = []
        for (promise, timer) in all {
            timer.cancel()
            promise.fail(error)
        }
    }
}
