import Foundation

/// How a ``SocketActor`` sets up its socket.
public struct SocketOptions: Sendable {
    /// The libzmq socket type.
    public var type: SocketType
    /// Endpoints to bind (stable services bind), e.g. `tcp://*:7101` or `tcp://127.0.0.1:*`.
    public var binds: [String] = []
    /// Endpoints to connect to (scaled services and clients connect).
    public var connects: [String] = []
    /// Topic prefixes to subscribe to (SUB sockets only).
    public var subscriptions: [Data] = []
    /// Routing identity of this socket (DEALER), if any.
    public var identity: Data? = nil
    /// Largest frame accepted; bigger ones are reported as oversized and dropped.
    public var maxFrameBytes: Int = 1 << 20
    /// libzmq hard limit on a whole message; a peer sending more is disconnected.
    /// Defaults to 16 × `maxFrameBytes`: the soft limit above answers normal mistakes.
    public var hardMessageLimit: Int64? = nil
    /// Send high-water mark in messages.
    public var sendHighWaterMark: Int32 = 100_000
    /// Receive high-water mark in messages.
    public var receiveHighWaterMark: Int32 = 100_000
    /// How long unsent messages are kept when the socket closes.
    public var lingerMilliseconds: Int32 = 200
    /// Received messages handed to async code but not yet consumed before the socket thread
    /// stops reading (libzmq then queues up to the high-water mark, pushing back on peers).
    public var mailboxCapacity: Int = 50_000
    /// Messages waiting to be sent before the oldest are dropped (counted).
    public var sendQueueLimit: Int = 200_000
    /// Reconnect interval in milliseconds.
    public var reconnectIntervalMilliseconds: Int32 = 100
    /// Maximum reconnect interval in milliseconds (exponential back-off).
    public var reconnectIntervalMaxMilliseconds: Int32 = 2_000
    /// Queue messages only on completed connections (`ZMQ_IMMEDIATE`): a DEALER connected to
    /// several replicas then skips one that went away instead of queueing for its return.
    public var immediate: Bool = false
    /// TCP keepalive so dead peers are noticed: probes after 30 s idle, every 10 s, 3 unanswered
    /// end the connection (`ZMQ_TCP_KEEPALIVE_IDLE`/`_INTVL`/`_CNT`; the kernel's defaults wait
    /// two hours). A peer that still answers TCP but not ZeroMQ is ``heartbeat``'s.
    public var tcpKeepAlive: Bool = true
    /// ZMTP heartbeats; nil takes the context's ``ZMQContext/heartbeat``.
    public var heartbeat: ZMQHeartbeat? = nil
    /// How often peer names in `connects` are resolved again (``EndpointDiscovery``); nil takes
    /// the context's ``ZMQContext/discoveryInterval``, zero turns discovery off for this socket.
    public var discoveryInterval: Duration? = nil
    /// How peer names are resolved (getaddrinfo unless a test gives its own).
    public var resolve: EndpointDiscovery.Resolve? = nil
    /// The socket's CurveZMQ role when its context has ``BusSecurity`` (ignored otherwise).
    public var curve: CurveRole = .none
    /// The ZAP domain of a CURVE server socket: the context's ``ZMQContext`` admits to a domain
    /// it restricts only the principals it lists (a stream's readers on its PUB socket); the
    /// default domain admits every trusted principal.
    public var zapDomain: String = RawSocket.defaultZAPDomain
    /// Whether ``SocketActor/send(_:)`` may send on the caller's thread: when the socket's
    /// thread is not using the socket and nothing queued waits before the message, the caller
    /// sends it itself (under the socket's lock) instead of queueing it and waking the thread.
    /// Messages from one caller keep their order either way. For sockets whose messages are
    /// independent requests or replies (an RPC client's DEALER, an RPC server's ROUTER), where
    /// the hand-off is most of a send.
    public var callerSends: Bool = false

    public init(type: SocketType) {
        self.type = type
    }
}

/// ZMTP heartbeats (`ZMQ_HEARTBEAT_IVL`, `_TIMEOUT`, `_TTL`): a PING every ``interval`` on each
/// connection; one that has not answered within ``timeout`` is closed and made again, so a
/// link that silently drops everything (a black hole, a peer frozen behind a live TCP stack) is
/// noticed in seconds instead of never. The peer is told to wait the same ``timeout``.
public struct ZMQHeartbeat: Sendable, Equatable {
    public var interval: Duration
    public var timeout: Duration

    /// A PING every `interval`; no answer within `timeout` (default 3 × `interval`) ends the connection.
    public init(interval: Duration = .seconds(5), timeout: Duration? = nil) {
        self.interval = interval
        self.timeout = timeout ?? interval * 3
    }

    /// libzmq's milliseconds of `d` (at least 1, at most what an Int32 holds; the TTL is kept
    /// in deciseconds below 6 553.5 s by libzmq).
    static func milliseconds(_ d: Duration) -> Int32 {
        let ms = d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(1, ms))
    }
}

/// What a socket is in a CurveZMQ handshake.
public enum CurveRole: Sendable, Equatable {
    /// No CURVE (inproc plumbing).
    case none
    /// The binding side: accepts clients the context's ZAP handler trusts, and reports each
    /// message's sender principal in ``ReceivedMessage/principal``.
    case server
    /// The connecting side, talking to servers of `principal` (their public key is looked up
    /// in the context's ``BusSecurity``).
    case client(server: String)
}
