import CZMQ
import Foundation

/// The libzmq socket types this project uses.
public enum SocketType: Sendable {
    case dealer, router, pub, sub, push, pull, pair

    var raw: Int32 {
        switch self {
        case .dealer: ZMQ_DEALER
        case .router: ZMQ_ROUTER
        case .pub: ZMQ_PUB
        case .sub: ZMQ_SUB
        case .push: ZMQ_PUSH
        case .pull: ZMQ_PULL
        case .pair: ZMQ_PAIR
        }
    }
}

/// A thin wrapper over one libzmq socket. Not thread-safe: only the thread of the
/// ``SocketActor`` that created it touches it.
final class RawSocket {
    let handle: UnsafeMutableRawPointer

    init(context: ZMQContext, type: SocketType) throws {
        guard let s = zmq_socket(context.handle, type.raw) else { throw ZMQError.current("zmq_socket") }
        handle = s
    }

    func set(_ option: Int32, _ value: Int32) throws {
        var v = value
        if zmq_setsockopt(handle, option, &v, MemoryLayout<Int32>.size) != 0 {
            throw ZMQError.current("zmq_setsockopt(\(option))")
        }
    }

    func set(_ option: Int64Option, _ value: Int64) throws {
        var v = value
        if zmq_setsockopt(handle, option.raw, &v, MemoryLayout<Int64>.size) != 0 {
            throw ZMQError.current("zmq_setsockopt(\(option.raw))")
        }
    }

    func set(_ option: Int32, bytes: [UInt8]) throws {
        let rc = bytes.withUnsafeBytes { zmq_setsockopt(handle, option, $0.baseAddress, $0.count) }
        if rc != 0 { throw ZMQError.current("zmq_setsockopt(\(option))") }
    }

    /// Sets a string option (Z85 keys, the ZAP domain).
    func set(_ option: Int32, string: String) throws {
        try set(option, bytes: Array(string.utf8))
    }

    /// The ZAP domain of server sockets that restrict nobody.
    static let defaultZAPDomain = "chronir"

    /// Applies a CURVE role with the context's keys; nothing on a plain bus. A server's ZAP
    /// domain is set apart, once (``SocketOptions/zapDomain``).
    func applyCurve(_ role: CurveRole, security: BusSecurity?) throws {
        guard let security else { return }
        switch role {
        case .none:
            return
        case .server:
            try set(ZMQ_CURVE_SERVER, 1)
            try set(ZMQ_CURVE_SECRETKEY, string: security.keys.secretKey)
        case .client(let server):
            guard let serverKey = security.publicKey(of: server) else {
                throw BusSecurity.Invalid("no public key for \(server): add \(server).pub to the bus keys")
            }
            try set(ZMQ_CURVE_SERVERKEY, string: serverKey)
            try set(ZMQ_CURVE_PUBLICKEY, string: security.keys.publicKey)
            try set(ZMQ_CURVE_SECRETKEY, string: security.keys.secretKey)
        }
    }

    /// Binds and returns the concrete endpoint (a wildcard port resolved).
    func bind(_ endpoint: String) throws -> String {
        if zmq_bind(handle, endpoint) != 0 { throw ZMQError.current("zmq_bind(\(endpoint))") }
        return lastEndpoint() ?? endpoint
    }

    func unbind(_ endpoint: String) throws {
        if zmq_unbind(handle, endpoint) != 0 { throw ZMQError.current("zmq_unbind(\(endpoint))") }
    }

    func connect(_ endpoint: String) throws {
        if zmq_connect(handle, endpoint) != 0 { throw ZMQError.current("zmq_connect(\(endpoint))") }
    }

    func disconnect(_ endpoint: String) throws {
        if zmq_disconnect(handle, endpoint) != 0 { throw ZMQError.current("zmq_disconnect(\(endpoint))") }
    }

    func lastEndpoint() -> String? {
        var buffer = [CChar](repeating: 0, count: 512)
        var size = buffer.count
        guard zmq_getsockopt(handle, ZMQ_LAST_ENDPOINT, &buffer, &size) == 0 else { return nil }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Sends a multipart message without blocking. Returns false when libzmq would block
    /// (high-water mark reached or no peer); throws on any other error.
    func send(_ frames: [Data]) throws -> Bool {
        for (index, frame) in frames.enumerated() {
            let more = index < frames.count - 1
            let flags = ZMQ_DONTWAIT | (more ? ZMQ_SNDMORE : 0)
            let rc = frame.withUnsafeBytes { zmq_send(handle, $0.baseAddress, $0.count, flags) }
            if rc < 0 {
                let err = zmq_errno()
                if err == EAGAIN && index == 0 { return false }
                if err == EINTR && index == 0 { return false }
                throw ZMQError(code: err, operation: "zmq_send")
            }
        }
        return true
    }

    /// Receives one multipart message without blocking; nil when none is waiting.
    /// Frames larger than `maxFrameBytes` are replaced by an empty frame and reported in
    /// `oversized` (their size), so the caller can reject them without holding the bytes.
    func receive(maxFrameBytes: Int, readPrincipal: Bool = false) throws -> ReceivedMessage? {
        var frames: [Data] = []
        var oversized: Int? = nil
        var principal: String? = nil
        while true {
            var msg = zmq_msg_t()
            zmq_msg_init(&msg)
            defer { zmq_msg_close(&msg) }
            let rc = zmq_msg_recv(&msg, handle, ZMQ_DONTWAIT)
            if rc < 0 {
                let err = zmq_errno()
                if frames.isEmpty && (err == EAGAIN || err == EINTR) { return nil }
                if err == EINTR { continue }
                throw ZMQError(code: err, operation: "zmq_msg_recv")
            }
            // The metadata rides on frames that came over the wire (a ROUTER's routing-id frame
            // is made locally and has none), so read it from the last frame.
            if readPrincipal, zmq_msg_more(&msg) == 0, let user = zmq_msg_gets(&msg, "User-Id") {
                principal = String(cString: user)
            }
            let size = zmq_msg_size(&msg)
            if size > maxFrameBytes {
                oversized = max(oversized ?? 0, size)
                frames.append(Data())
            } else if size == 0 {
                frames.append(Data())
            } else {
                frames.append(Data(bytes: zmq_msg_data(&msg), count: size))
            }
            if zmq_msg_more(&msg) == 0 { break }
        }
        return ReceivedMessage(frames: frames, oversizedBytes: oversized, principal: principal)
    }

    /// `ZMQ_EVENTS`: whether a message can be received (`ZMQ_POLLIN`) or sent (`ZMQ_POLLOUT`)
    /// now; nil when the context is terminating (or the socket failed). Reading it processes
    /// the socket's pending commands, which resets ``notificationFD``.
    func events() -> Int32? {
        var value: Int32 = 0
        var size = MemoryLayout<Int32>.size
        return zmq_getsockopt(handle, ZMQ_EVENTS, &value, &size) == 0 ? value : nil
    }

    /// `ZMQ_FD`: a descriptor that turns readable when ``events()`` may have changed. It is
    /// edge-triggered: any send, receive or `events()` on the socket may consume the edge, so
    /// whoever touches the socket must read `events()` afterwards.
    func notificationFD() throws -> Int32 {
        var fd: Int32 = -1
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(handle, ZMQ_FD, &fd, &size) == 0 else { throw ZMQError.current("zmq_getsockopt(ZMQ_FD)") }
        return fd
    }

    func close(lingerMilliseconds: Int32) {
        try? set(ZMQ_LINGER, lingerMilliseconds)
        zmq_close(handle)
    }
}

/// Options libzmq takes as 64-bit integers.
enum Int64Option {
    case maxMessageSize
    var raw: Int32 {
        switch self {
        case .maxMessageSize: ZMQ_MAXMSGSIZE
        }
    }
}

/// One multipart message as received.
public struct ReceivedMessage: Sendable {
    /// The frames in order (for a ROUTER socket the first is the peer's routing id).
    public var frames: [Data]
    /// When a frame exceeded the size limit: its size in bytes (that frame is empty here).
    public var oversizedBytes: Int?
    /// On a CURVE server socket: the principal the ZAP handler accepted for the sending
    /// connection (its `User-Id`). Nil on a plain bus.
    public var principal: String?

    public init(frames: [Data], oversizedBytes: Int? = nil, principal: String? = nil) {
        self.frames = frames
        self.oversizedBytes = oversizedBytes
        self.principal = principal
    }
}
