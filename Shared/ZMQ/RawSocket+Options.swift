import CZMQ

extension RawSocket {
    /// Applies `options` (and `context`'s heartbeat and keys) to a socket not yet bound or
    /// connected; `discovered`: its connects come from a name over several replicas. Returns
    /// the socket's notification descriptor when callers send themselves
    /// (``SocketOptions/callerSends``), else nil.
    func configure(_ options: SocketOptions, context: ZMQContext, discovered: Bool) throws -> Int32? {
        try set(ZMQ_SNDHWM, options.sendHighWaterMark)
        try set(ZMQ_RCVHWM, options.receiveHighWaterMark)
        try set(ZMQ_LINGER, options.lingerMilliseconds)
        try set(ZMQ_RECONNECT_IVL, options.reconnectIntervalMilliseconds)
        try set(ZMQ_RECONNECT_IVL_MAX, options.reconnectIntervalMaxMilliseconds)
        if options.tcpKeepAlive {
            try set(ZMQ_TCP_KEEPALIVE, 1)
            try set(ZMQ_TCP_KEEPALIVE_IDLE, 30)
            try set(ZMQ_TCP_KEEPALIVE_INTVL, 10)
            try set(ZMQ_TCP_KEEPALIVE_CNT, 3)
        }
        if let beat = options.heartbeat ?? context.heartbeat {
            let timeout = ZMQHeartbeat.milliseconds(beat.timeout)
            try set(ZMQ_HEARTBEAT_IVL, ZMQHeartbeat.milliseconds(beat.interval))
            try set(ZMQ_HEARTBEAT_TIMEOUT, timeout)
            try set(ZMQ_HEARTBEAT_TTL, min(timeout, 6_553_000))
        }
        try applyCurve(options.curve, security: context.security)
        if options.curve == .server, context.security != nil { try set(ZMQ_ZAP_DOMAIN, string: options.zapDomain) }
        // A DEALER over discovered replicas queues only on live connections, like one given a list.
        if options.immediate || (discovered && options.type == .dealer) { try set(ZMQ_IMMEDIATE, 1) }
        let hard = options.hardMessageLimit ?? Int64(options.maxFrameBytes) * 16
        try set(.maxMessageSize, hard)
        let notifyFD = options.callerSends ? try notificationFD() : nil
        if let identity = options.identity { try set(ZMQ_ROUTING_ID, bytes: [UInt8](identity)) }
        if options.type == .router {
            // A reconnecting peer with the same identity takes over its old route.
            try set(ZMQ_ROUTER_HANDOVER, 1)
        }
        for prefix in options.subscriptions { try set(ZMQ_SUBSCRIBE, bytes: [UInt8](prefix)) }
        return notifyFD
    }
}
