/// One live connection (`GET /v1/me/events`) registered with a ``LiveRouter``: the notifications of
/// its user arrive on ``stream``. It counts toward the user's cap (``LiveRouter/perUser``) until it
/// is closed or the last reference to it goes — so a response whose body never ran (the client
/// left before the stream began) gives its place back too.
final class LiveConnection: Sendable {
    let id: UInt64
    let user: String
    /// What the connection sends; it finishes when the connection is closed.
    let stream: AsyncStream<LiveRouter.Item>
    private let router: LiveRouter
    private let sink: LiveRouter.Sink

    init(router: LiveRouter, id: UInt64, user: String, stream: AsyncStream<LiveRouter.Item>, sink: LiveRouter.Sink) {
        self.router = router
        self.id = id
        self.user = user
        self.stream = stream
        self.sink = sink
    }

    /// The smallest notification id the full buffer refused since the last call, or nil: the
    /// writer then reads the inbox from there (every refused id is newer than all the buffer holds).
    /// The first notification id the buffer took (nil: none yet).
    var firstAccepted: Int64? { sink.firstAccepted.withLock { $0 } }

    func takeDropped() -> Int64? {
        sink.dropped.withLock { d in
            defer { d = nil }
            return d
        }
    }

    /// Unregisters the connection (again is harmless).
    func close() {
        router.unregister(id, user: user)
    }

    deinit {
        router.unregister(id, user: user)
    }
}
