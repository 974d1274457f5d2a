import CZMQ
import Foundation
import Synchronization

/// The ZeroMQ Authentication Protocol handler of one context (RFC 27, as czmq's `zauth`):
/// a REP socket on `inproc://zeromq.zap.01` answering each CURVE handshake of the context's
/// server sockets. A client whose public key belongs to a trusted principal is accepted with
/// that principal as its `User-Id`; any other is refused (libzmq then drops the connection
/// without a reply). On a socket whose ZAP domain is restricted (a stream's PUB socket,
/// `events:<stream>`), only the principals listed for the domain are accepted.
///
/// Runs on its own thread from the context's creation; ends when the context shuts down.
final class ZAPHandler: Sendable {
    private let security: Mutex<BusSecurity>
    private let onDecision: @Sendable (ZAPDecision) -> Void
    private let domainReaders: [String: Set<String>]
    nonisolated(unsafe) private let socket: UnsafeMutableRawPointer
    private let closed = DispatchSemaphore(value: 0)

    /// Binds the handler; must happen before any server socket of the context binds.
    init(context: UnsafeMutableRawPointer, security: BusSecurity, domainReaders: [String: Set<String>] = [:],
         onDecision: @escaping @Sendable (ZAPDecision) -> Void) throws {
        self.security = Mutex(security)
        self.domainReaders = domainReaders
        self.onDecision = onDecision
        guard let s = zmq_socket(context, ZMQ_REP) else { throw ZMQError.current("zmq_socket(ZAP)") }
        var linger: Int32 = 0
        zmq_setsockopt(s, ZMQ_LINGER, &linger, MemoryLayout<Int32>.size)
        guard zmq_bind(s, "inproc://zeromq.zap.01") == 0 else {
            let error = ZMQError.current("zmq_bind(inproc://zeromq.zap.01)")
            zmq_close(s)
            throw error
        }
        self.socket = s
        let thread = Thread { [self] in self.run() }
        thread.name = "zmq:zap"
        thread.start()
    }

    /// Accepts the keys of `new` from the next handshake on (connections already made stay).
    func update(_ new: BusSecurity) { security.withLock { $0 = new } }

    /// Waits until the thread has closed its socket (after the context began shutting down).
    func waitUntilClosed() { closed.wait() }

    private func run() {
        while true {
            guard let request = receive() else { break }
            let reply = answer(request)
            if !send(reply) { break }
        }
        zmq_close(socket)
        closed.signal()
    }

    /// RFC 27 request: version, request id, domain, address, routing id, mechanism, credentials.
    private func answer(_ frames: [Data]) -> [Data] {
        guard frames.count >= 6 else {
            return reply(version: "1.0", id: Data(), status: "500", text: "malformed ZAP request", user: "")
        }
        let version = String(decoding: frames[0], as: UTF8.self)
        let id = frames[1]
        let domain = String(decoding: frames[2], as: UTF8.self)
        let address = String(decoding: frames[3], as: UTF8.self)
        let mechanism = String(decoding: frames[5], as: UTF8.self)
        guard version == "1.0" else { return reply(version: "1.0", id: id, status: "500", text: "unknown ZAP version", user: "") }
        guard mechanism == "CURVE", frames.count >= 7 else {
            onDecision(ZAPDecision(address: address, principal: nil, reason: "mechanism \(mechanism) is not allowed"))
            return reply(version: version, id: id, status: "400", text: "CURVE required", user: "")
        }
        guard let principal = security.withLock({ $0.principal(ofKey: frames[6]) }) else {
            let key = CurveKey.encode(frames[6]) ?? "?"
            onDecision(ZAPDecision(address: address, principal: nil, reason: "unknown public key \(key)"))
            return reply(version: version, id: id, status: "400", text: "unknown key", user: "")
        }
        if let readers = domainReaders[domain], !readers.contains(principal) {
            onDecision(ZAPDecision(address: address, principal: nil, reason: "\(principal) may not connect to \(domain)"))
            return reply(version: version, id: id, status: "400", text: "not a reader of \(domain)", user: "")
        }
        onDecision(ZAPDecision(address: address, principal: principal, reason: "trusted key"))
        return reply(version: version, id: id, status: "200", text: "OK", user: principal)
    }

    private func reply(version: String, id: Data, status: String, text: String, user: String) -> [Data] {
        [Data(version.utf8), id, Data(status.utf8), Data(text.utf8), Data(user.utf8), Data()]
    }

    private func receive() -> [Data]? {
        var frames: [Data] = []
        while true {
            var msg = zmq_msg_t()
            zmq_msg_init(&msg)
            defer { zmq_msg_close(&msg) }
            if zmq_msg_recv(&msg, socket, 0) < 0 {
                if zmq_errno() == EINTR { continue }
                return nil   // ETERM: the context is shutting down
            }
            let size = zmq_msg_size(&msg)
            frames.append(size == 0 ? Data() : Data(bytes: zmq_msg_data(&msg), count: size))
            if zmq_msg_more(&msg) == 0 { return frames }
        }
    }

    private func send(_ frames: [Data]) -> Bool {
        for (i, frame) in frames.enumerated() {
            let flags = i < frames.count - 1 ? ZMQ_SNDMORE : 0
            while frame.withUnsafeBytes({ zmq_send(socket, $0.baseAddress, $0.count, flags) }) < 0 {
                if zmq_errno() != EINTR { return false }
            }
        }
        return true
    }
}

/// One ZAP decision: who connected from where, accepted (principal set) or refused (nil).
public struct ZAPDecision: Sendable {
    /// The peer's address as libzmq reports it.
    public let address: String
    /// The principal accepted, or nil when refused.
    public let principal: String?
    /// Why.
    public let reason: String
}
