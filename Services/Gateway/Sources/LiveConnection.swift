/// One live connection (`GET /v1/me/events`) registered with a ``LiveHub``: the notifications of
/// its user arrive on ``stream``. It counts toward the user's cap (``LiveHub/perUser``) until it
/// is closed or the last reference to it goes — so a response whose body never ran (the client
/// left before the stream began) gives its place back too.
final class LiveConnection: Sendable {
    let id: UInt64
    let user: String
    /// What the connection sends; it finishes when the connection is closed.
    let stream: AsyncStream<LiveHub.Item>
    private let hub: LiveHub

    init(hub: LiveHub, id: UInt64, user: String, stream: AsyncStream<LiveHub.Item>) {
        self.hub = hub
        self.id = id
        self.user = user
        self.stream = stream
    }

    /// Unregisters the connection (again is harmless).
    func close() {
        hub.unregister(id, user: user)
    }

    deinit {
        hub.unregister(id, user: user)
    }
}
