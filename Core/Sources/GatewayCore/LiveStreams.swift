import Foundation

/// The gateway's live connections (`GET /v1/me/events`) as one value: whose each is, on which
/// session and until when its token holds, capped per user (`CHRONIR_LIVE_STREAMS_PER_ACCOUNT`).
/// `Sink` is what the shell hands each connection's items to.
public struct LiveStreams<Sink: Sendable>: Sendable {
    /// One connection.
    public struct Entry: Sendable {
        public var user: String
        public var session: String
        public var expires: Date
        public var sink: Sink
    }

    private var byUser: [String: [UInt64: Entry]] = [:]
    /// The most connections one user may hold at once (at least 1).
    public let perUser: Int

    public init(perUser: Int) {
        self.perUser = max(1, perUser)
    }

    /// Opens connection `id` of `user`; false (nothing recorded) when the user holds
    /// ``perUser`` already.
    public mutating func open(_ id: UInt64, user: String, session: String, expires: Date, sink: Sink) -> Bool {
        guard (byUser[user]?.count ?? 0) < perUser else { return false }
        byUser[user, default: [:]][id] = Entry(user: user, session: session, expires: expires, sink: sink)
        return true
    }

    /// Closes connection `id` of `user`: its entry, nil when it is gone already.
    public mutating func close(_ id: UInt64, user: String) -> Entry? {
        let entry = byUser[user]?.removeValue(forKey: id)
        if byUser[user]?.isEmpty == true { byUser[user] = nil }
        return entry
    }

    /// The connections to end now: those whose session `isRevoked` (a sign-out, a reused refresh
    /// token, a password reset) or whose access token expired by `now`. A stolen token's stream
    /// does not outlive its session. Nothing is closed: the shell closes each (``close(_:user:)``).
    public func ended(isRevoked: (String) -> Bool, now: Date) -> [(id: UInt64, user: String)] {
        byUser.values.flatMap { $0 }.filter { isRevoked($0.value.session) || $0.value.expires <= now }.map { ($0.key, $0.value.user) }
    }

    /// The sinks of `user`'s connections.
    public func sinks(of user: String) -> [Sink] { byUser[user].map { $0.values.map(\.sink) } ?? [] }

    /// Every connection's sink.
    public var allSinks: [Sink] { byUser.values.flatMap { $0.values.map(\.sink) } }

    /// How many connections are open.
    public var count: Int { byUser.values.reduce(0) { $0 + $1.count } }

    /// How many connections `user` holds.
    public func count(of user: String) -> Int { byUser[user]?.count ?? 0 }
}
