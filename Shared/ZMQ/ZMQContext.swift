import CZMQ
import Synchronization

/// A libzmq context: owns the I/O threads shared by every socket created from it.
///
/// Create one per process in the service builder and pass it down; terminate it last,
/// after every ``SocketActor`` created from it has been closed.
public final class ZMQContext: Sendable {
    nonisolated(unsafe) let handle: UnsafeMutableRawPointer
    private let terminated = Atomic<Bool>(false)
    /// The sockets of ``SocketActor``s not closed yet: their names (to name a leak at shutdown)
    /// and how each takes reloaded keys.
    private let open = Mutex<[ObjectIdentifier: (name: String, rekey: (@Sendable (BusSecurity) -> Void)?)]>([:])
    /// The keys of a CURVE-secured bus, or nil for a plain (insecure) one (the current ones after
    /// a ``reload(_:)``).
    public var security: BusSecurity? { current.withLock { $0 } }
    private let current: Mutex<BusSecurity?>
    private let zap: ZAPHandler?
    /// How often sockets made from this context resolve their peers' names again, to find
    /// every replica behind one name (``EndpointDiscovery``); nil: libzmq resolves a name itself,
    /// to one address per connection.
    public let discoveryInterval: Duration?
    /// The ZMTP heartbeats of sockets made from this context (``SocketOptions/heartbeat``
    /// overrides it per socket); nil: none, a silent link is never noticed.
    public let heartbeat: ZMQHeartbeat?

    /// Creates a plain context (no CURVE) with the given number of libzmq I/O threads.
    public init(ioThreads: Int = 1, discoveryInterval: Duration? = nil, heartbeat: ZMQHeartbeat? = ZMQHeartbeat()) {
        self.discoveryInterval = discoveryInterval
        self.heartbeat = heartbeat
        self.handle = Self.newContext(ioThreads: ioThreads)
        self.current = Mutex(nil)
        self.zap = nil
    }

    /// Creates a context whose TCP sockets use CurveZMQ with `security`'s keys, and starts its
    /// ZAP handler (before any socket exists, so no handshake is ever accepted unchecked).
    /// `onZAPDecision` hears of every handshake (on the handler's thread; keep it quick).
    /// `domainReaders`: the principals admitted to each restricted ZAP domain
    /// (``SocketOptions/zapDomain``); a domain not listed admits every trusted principal.
    public init(ioThreads: Int = 1, security: BusSecurity, discoveryInterval: Duration? = nil,
                heartbeat: ZMQHeartbeat? = ZMQHeartbeat(), domainReaders: [String: Set<String>] = [:],
                onZAPDecision: @escaping @Sendable (ZAPDecision) -> Void = { _ in }) throws {
        self.discoveryInterval = discoveryInterval
        self.heartbeat = heartbeat
        guard CurveKey.isSupported else { throw BusSecurity.Invalid("this libzmq was built without CURVE (libsodium)") }
        let ctx = Self.newContext(ioThreads: ioThreads)
        do {
            self.zap = try ZAPHandler(context: ctx, security: security, domainReaders: domainReaders, onDecision: onZAPDecision)
        } catch {
            zmq_ctx_term(ctx)
            throw error
        }
        self.handle = ctx
        self.current = Mutex(security)
    }

    /// Takes the keys of `new` without a restart: the ZAP handler accepts `new`'s keys from the
    /// next handshake on, sockets made from now on use them, and the sockets already made rebuild
    /// what the change touches (a server binds again when this process's key pair changed; a
    /// client connects again when its server's key or this process's key pair changed). Throws on
    /// a plain context, or when `new` is another principal's.
    public func reload(_ new: BusSecurity) throws {
        guard let zap, let old = security else { throw BusSecurity.Invalid("this bus is not secured: nothing to reload") }
        guard new.principal == old.principal else {
            throw BusSecurity.Invalid("a reload keeps this process's principal (\(old.principal)), not \(new.principal)")
        }
        current.withLock { $0 = new }
        zap.update(new)
        for rekey in open.withLock({ $0.values.compactMap(\.rekey) }) { rekey(new) }
    }

    private static func newContext(ioThreads: Int) -> UnsafeMutableRawPointer {
        guard let ctx = zmq_ctx_new() else {
            fatalError("zmq_ctx_new failed: \(ZMQError.current())")
        }
        zmq_ctx_set(ctx, ZMQ_IO_THREADS, Int32(ioThreads))
        // We open far more sockets in tests than the default 1024 allows.
        zmq_ctx_set(ctx, ZMQ_MAX_SOCKETS, 8192)
        return ctx
    }

    /// The names of the sockets created from this context and not closed yet.
    public var openSocketNames: [String] { open.withLock { $0.values.map(\.name).sorted() } }

    func opened(_ socket: ObjectIdentifier, name: String, rekey: (@Sendable (BusSecurity) -> Void)? = nil) {
        open.withLock { $0[socket] = (name, rekey) }
    }
    func closed(_ socket: ObjectIdentifier) { open.withLock { _ = $0.removeValue(forKey: socket) } }

    /// Terminates the context when every socket is closed, within `timeout`; returns the names
    /// of the sockets still open instead (the context is then left as it is: `zmq_ctx_term`
    /// would wait for them forever, and a process about to exit need not wait).
    public func terminate(within timeout: Duration) async -> [String] {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while !openSocketNames.isEmpty, clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if !openSocketNames.isEmpty {
            // Blocking calls on the sockets left fail with ETERM, so their threads close them.
            zmq_ctx_shutdown(handle)
            let grace = clock.now + .seconds(1)
            while !openSocketNames.isEmpty, clock.now < grace {
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        let left = openSocketNames
        if left.isEmpty { terminate() }
        return left
    }

    /// Terminates the context. Blocks until every socket of the context is closed, so call it
    /// only after closing all actors. Idempotent.
    public func terminate() {
        guard !terminated.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if let zap {
            zmq_ctx_shutdown(handle)   // the ZAP handler's blocking receive returns ETERM
            zap.waitUntilClosed()
        }
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }

    deinit { terminate() }

    /// The libzmq version linked at run time, e.g. "4.3.4".
    public static var libraryVersion: String {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }
}

/// An error reported by libzmq.
public struct ZMQError: Error, CustomStringConvertible, Sendable {
    /// The errno value libzmq reported.
    public let code: Int32
    /// What was being done.
    public let operation: String

    public var description: String {
        let text = String(cString: zmq_strerror(code))
        return "\(operation): \(text) (errno \(code))"
    }

    static func current(_ operation: String = "zmq") -> ZMQError {
        ZMQError(code: zmq_errno(), operation: operation)
    }
}
