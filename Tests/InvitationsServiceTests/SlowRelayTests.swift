import AccountsService
import Foundation
import Logging
import NIOPosix
import Persistence
import ServiceKit
import Support
import Testing

/// Issue 74: a relay that answers each SMTP command just inside the client's per-reply timeout
/// keeps a session going far longer than a mail's one-minute lease, and another replica would
/// claim the row and send the mail again while the first send is still open. Each send is
/// bounded as a whole, and a mail starts only while its send still ends inside the lease.
@Suite("Slow SMTP relay: sends bounded inside their lease")
struct SlowRelayTests {
    /// An SMTP server that answers every command after `delay` seconds.
    static let script = #"""
    import asyncio, sys
    port, delay = int(sys.argv[1]), float(sys.argv[2])
    async def handle(r, w):
        w.write(b"220 slow ESMTP\r\n"); await w.drain()
        data = False
        while True:
            line = await r.readline()
            if not line: break
            if data:
                if line == b".\r\n":
                    data = False; await asyncio.sleep(delay); w.write(b"250 queued\r\n"); await w.drain()
                continue
            await asyncio.sleep(delay)
            cmd = line[:4].upper()
            if cmd == b"DATA": w.write(b"354 go on\r\n"); data = True
            elif cmd == b"QUIT": w.write(b"221 bye\r\n"); await w.drain(); break
            elif cmd == b"EHLO": w.write(b"250-slow\r\n250 8BITMIME\r\n")
            else: w.write(b"250 ok\r\n")
            await w.drain()
        w.close()
    async def main():
        server = await asyncio.start_server(handle, "127.0.0.1", port)
        async with server: await server.serve_forever()
    asyncio.run(main())
    """#

    @Test("with replies 1 s apart (a session of ~7 s), a 4 s lease and sends bounded at 1.5 s: two mails are tried and cut at their bound, the third goes back at once instead of starting a send its lease cannot cover")
    func boundedInsideTheLease() async throws {
        let port = freePort()
        let python = ProcessInfo.processInfo.environment["CHRONIR_TEST_PYTHON"] ?? "/usr/bin/python3"
        let relay = try TestProcess(url: URL(fileURLWithPath: python), ["-c", Self.script, "\(port)", "1"], label: "slow-smtp")
        defer { Task { await relay.terminate() } }
        let url = try await TestDatabase.create("slowrelay")
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { Task { try? await group.shutdownGracefully() } }
        let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        try await withDatabase(url: url, schema: "accounts") { db in
            try await Migrator(database: db).migrate(AccountsService.migrations)
            try await db.transaction { c in
                for i in 1...3 {
                    try await MailOutbox.enqueue(to: "r\(i)@example.com", subject: "Mail \(i)", body: "hello", userId: nil, on: c, logger: logger)
                }
            }
            let smtp = try SMTPClient(url: "smtp://127.0.0.1:\(port)", from: "no-reply@chronir.example", eventLoopGroup: group)
            let sender = MailSender(database: db, smtp: smtp, logger: logger, lease: .seconds(4), sendBound: .milliseconds(1_500))
            // The relay listens once Python has started.
            #expect(await eventually(timeout: .seconds(10)) { (try? RawTCP.connect(port: port)) == true })
            let started = ContinuousClock.now
            try await sender.sendDue()
            let took = started.duration(to: .now)
            #expect(took < .milliseconds(3_800), "the batch ran \(took), past its 4 s lease")
            var rows: [(String, Int, String?, Bool)] = []
            for try await r in try await db.query("SELECT recipient, attempts, last_error, sent_at IS NOT NULL FROM mail_outbox ORDER BY id")
                .decode((String, Int, String?, Bool).self) { rows.append(r) }
            #expect(rows.count == 3)
            #expect(rows.prefix(2).allSatisfy { $0.1 == 1 && ($0.2 ?? "").contains("no answer within") && !$0.3 }, "\(rows)")
            #expect(rows.last.map { $0.1 == 0 && $0.2 == nil && !$0.3 } == true, "the third was not put back: \(rows)")
        }
    }
}

/// A plain TCP connect, to see a local server listen.
enum RawTCP {
    static func connect(port: Int) throws -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return result == 0
    }
}
