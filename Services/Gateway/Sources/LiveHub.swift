import Contracts
import Foundation
import Messaging
import NIOCore
import ServiceLifecycle
import Synchronization
import TimingWheel
import Tracing

/// The gateway's live connections (`GET /v1/me/events`) by user, fed by the notifications event
/// stream. It follows the stream from its head at start (what happened before is read from the
/// inbox on connect), detecting gaps and replaying like every consumer; held in memory.
///
/// A notification whose instant has not come (a fire announced ahead of its due instant) waits
/// in a ``WaitingRoom`` and goes out at that instant; each user's notifications go out in id
/// order. At start the hub loads what is already waiting, so a restart loses none of it.
final class LiveHub: EventApplier, Service {
    /// What a connection receives.
    enum Item: Sendable {
        /// Notifications of the connection's user, in id order, as ready-made SSE frames (encoded
        /// when they arrived, so a burst released at one instant costs only the writes).
        case notifications([Frame])
        case ping
    }

    /// Where one connection's items go, and what did not fit.
    final class Sink: Sendable {
        let continuation: AsyncStream<Item>.Continuation
        /// The smallest notification id refused since the writer last looked (the buffer was
        /// full): the writer reads the inbox from there instead of losing the rest.
        let dropped = Mutex<Int64?>(nil)
        /// The first notification id the buffer took: where a resync starts when the writer has
        /// sent nothing yet (what the buffer holds then is older than what it refused).
        let firstAccepted = Mutex<Int64?>(nil)

        init(_ continuation: AsyncStream<Item>.Continuation) { self.continuation = continuation }
    }

    private let connections = Mutex<[String: [UInt64: Sink]]>([:])
    /// Whose session and token each connection runs on: ended when the session is signed out
    /// or the token expires (``endSignedOut(isRevoked:now:)``).
    private let sessions = Mutex<[UInt64: (user: String, session: String, expires: Date)]>([:])
    private let nextID = Atomic<UInt64>(0)
    private let start = Mutex<Int64?>(nil)
    private let notifications: RPCClient
    private let telemetry: Telemetry
    private let room = Mutex(WaitingRoom<Pending>(now: liveNow()))
    private let due = WakeSignal()
    /// Ids loaded from the waiting list at start: the stream may bring them again.
    private let preloaded = Mutex<Set<Int64>>([])

    /// What the hub reads of a notification to route it; the rest passes through as JSON.
    struct LiveNotification: Decodable, Sendable {
        var id: Int64
        var userId: String
        var type: String
        var createdAt: Date
    }

    /// One notification's SSE frame.
    struct Frame: Sendable {
        var id: Int64
        var bytes: ByteBuffer
    }

    /// A notification on its way out, with the event that brought it (for the trace).
    struct Pending: Sendable {
        var notification: LiveNotification
        var frame: Frame
        var envelope: Envelope?
        var arrived: Int64
    }

    /// The most live connections one user may hold at once (`CHRONIR_LIVE_STREAMS_PER_ACCOUNT`).
    let perUser: Int

    /// How many items one connection holds for a writer that has not caught up
    /// (`CHRONIR_LIVE_BUFFER`); the oldest are kept, and what does not fit is read from the inbox.
    let buffer: Int

    /// A pause before each item a live connection writes (`CHRONIR_FAILPOINT_LIVE_WRITE_DELAY`,
    /// tests only): a client slower than its notifications, so the buffer fills.
    let writeDelay: Duration

    init(notifications: RPCClient, telemetry: Telemetry, perUser: Int = 10, buffer: Int = 1024, writeDelay: Duration = .zero) {
        self.notifications = notifications
        self.writeDelay = writeDelay
        self.telemetry = telemetry
        self.perUser = perUser
        self.buffer = buffer
    }

    /// Live connections now.
    var count: Int { connections.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    /// Registers a connection of `user`, or nil when the user holds ``perUser`` already (checked
    /// and counted at once, so concurrent opens cannot pass the cap). The connection is
    /// unregistered when it is closed or released (``LiveConnection``).
    func open(user: String, session: String = "", expires: Date = .distantFuture) -> LiveConnection? {
        // The oldest items are kept: what a full buffer refuses is newer than all it holds, so the
        // writer sends what it holds, then reads the rest from the inbox (``Sink/dropped``).
        let (stream, continuation) = AsyncStream<Item>.makeStream(bufferingPolicy: .bufferingOldest(buffer))
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        let sink = Sink(continuation)
        let admitted = connections.withLock { all -> Bool in
            guard (all[user]?.count ?? 0) < perUser else { return false }
            all[user, default: [:]][id] = sink
            return true
        }
        guard admitted else {
            continuation.finish()
            return nil
        }
        sessions.withLock { $0[id] = (user, session, expires) }
        return LiveConnection(hub: self, id: id, user: user, stream: stream, sink: sink)
    }

    /// Ends connection `id` of `user` (its stream finishes); nothing when it is gone already.
    func unregister(_ id: UInt64, user: String) {
        sessions.withLock { $0[id] = nil }
        let c = connections.withLock { all -> Sink? in
            let c = all[user]?.removeValue(forKey: id)
            if all[user]?.isEmpty == true { all[user] = nil }
            return c
        }
        c?.continuation.finish()
    }

    /// Ends every connection whose session `isRevoked` (a sign-out, a reused refresh token, a
    /// password reset that took the account back) or whose access token expired by `now`: a
    /// stolen token's stream does not outlive the session. The client reconnects with a fresh
    /// token as after any drop (the web app does). Returns how many ended.
    @discardableResult
    func endSignedOut(isRevoked: (String) -> Bool, now: Date = Date()) -> Int {
        let ended = sessions.withLock { s in s.filter { isRevoked($0.value.session) || $0.value.expires <= now } }
        for (id, e) in ended { unregister(id, user: e.user) }
        if !ended.isEmpty { telemetry.counter("chronir_gateway_live_streams_ended_total").increment(by: ended.count) }
        return ended.count
    }

    /// Sends a keep-alive to every connection (proxies close silent connections).
    func ping() {
        let all = connections.withLock { $0.values.flatMap(\.values) }
        // A ping that does not fit is not missed: the buffer is full of what will be written.
        for c in all { c.continuation.yield(.ping) }
    }

    /// Notifications waiting for their instant.
    var waiting: Int { room.withLock { $0.count } }

    /// Releases waiting notifications at their instants.
    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let now = liveNow()
                self.send(self.room.withLock { $0.release(now: now) })
                let next = self.room.withLock { $0.nextInstant } ?? (now + 1000)
                await self.due.wait(timeout: .milliseconds(max(1, min(next - liveNow(), 1000))))
            }
        }
    }

    /// Live streams carry the moment only (the inbox is the record): a rewound stream is followed.
    var followsRewinds: Bool { true }

    func checkpoint(stream: String) async throws -> Int64 {
        if let s = start.withLock({ $0 }) { return s }
        let head = try await notifications.call(NotificationsMethods.Head.self, Empty(), timeout: .seconds(3)).head
        // What is already waiting was published before the head: load it (the stream may bring
        // some of it again; a repeat is dropped).
        var after: Int64 = 0
        var more = true
        var loaded = 0
        while more {
            let page = try await notifications.call(NotificationsMethods.Waiting.self, .init(after: after, limit: 2_000), timeout: .seconds(10))
            for n in page.notifications { arrive(n, envelope: nil, preloaded: true) }
            loaded += page.notifications.count
            after = page.notifications.last?.id ?? after
            more = page.hasMore
        }
        if loaded > 0 { telemetry.logger.info("live stream: loaded notifications waiting for their instant", metadata: ["waiting": "\(loaded)"]) }
        start.withLock { $0 = head }
        return head
    }

    func apply(stream: String, events: [DeliveredEvent]) async throws {
        for e in events {
            switch e.envelope.type {
            case NotificationsEvents.notificationCreated:
                // The notification's JSON goes out as it came: only what routes it is decoded
                // (decoding it whole and encoding it again was a tenth of the gateway's CPU).
                guard let raw = try? JSONMember.raw("notification", in: e.envelope.payload),
                      let n = try? JSONCoding.decode(LiveNotification.self, from: raw) else { continue }
                if preloaded.withLock({ $0.remove(n.id) }) != nil { continue }
                arrive(n, json: raw, envelope: e.envelope, preloaded: false)
            case NotificationsEvents.notificationWithdrawn:
                guard let w = try? e.envelope.decodePayload(NotificationsEvents.NotificationWithdrawn.self) else { continue }
                send(room.withLock { $0.withdraw(user: w.userId, ids: Set(w.ids), now: liveNow()) })
            default:
                continue
            }
        }
    }

    private func arrive(_ n: InboxNotification, envelope: Envelope?, preloaded isPreloaded: Bool) {
        guard let json = try? JSONCoding.encode(n) else { return }
        arrive(LiveNotification(id: n.id, userId: n.userId, type: n.type, createdAt: n.createdAt), json: json,
               envelope: envelope, preloaded: isPreloaded)
    }

    private func arrive(_ n: LiveNotification, json: Data, envelope: Envelope?, preloaded isPreloaded: Bool) {
        let now = liveNow()
        let at = Int64((n.createdAt.timeIntervalSince1970 * 1000).rounded(.up))
        let bytes = NotificationRoutes.frame(id: n.id, type: n.type, json: json)
        let pending = Pending(notification: n, frame: Frame(id: n.id, bytes: bytes), envelope: envelope, arrived: now)
        let out = room.withLock { r in
            if isPreloaded, r.isWaiting(n.id, user: n.userId) { return [Pending]() }
            return r.arrive(id: n.id, user: n.userId, at: at, item: pending, now: now)
        }
        if isPreloaded { preloaded.withLock { _ = $0.insert(n.id) } }
        send(out)
        if at > now { due.signal() }
    }

    /// Hands notifications to their users' live connections, one hand-off per user however many
    /// there are: the last hop of a traced message.
    private func send(_ items: [Pending]) {
        guard !items.isEmpty else { return }
        let now = liveNow()
        var order: [String] = []
        var byUser: [String: [Frame]] = [:]
        for p in items {
            let user = p.notification.userId
            if byUser[user] == nil { order.append(user) }
            byUser[user, default: []].append(p.frame)
        }
        var reached: [String: Int] = [:]
        for user in order {
            let targets = connections.withLock { Array(($0[user] ?? [:]).values) }
            let frames = byUser[user]!
            for c in targets {
                guard let first = frames.first?.id else { continue }
                switch c.continuation.yield(.notifications(frames)) {
                case .dropped:
                    c.dropped.withLock { $0 = min($0 ?? first, first) }
                    telemetry.counter("chronir_gateway_live_frames_dropped_total").increment(by: frames.count)
                case .enqueued:
                    c.firstAccepted.withLock { if $0 == nil { $0 = first } }
                default:
                    break
                }
            }
            reached[user] = targets.count
        }
        for p in items {
            guard let envelope = p.envelope else { continue }
            let span = telemetry.startProcessSpan(envelope, destination: "gateway.live", kind: .consumer)
            if span.isRecording {
                span.attributes["chronir.live.connections"] = reached[p.notification.userId] ?? 0
                span.attributes["chronir.live.waited_ms"] = Int(now - p.arrived)
            }
            span.end()
        }
    }

    func deadLetter(stream: String, seq: Int64, type: String?, raw: String, reason: String) async throws {}

    func skip(stream: String, to seq: Int64, reason: String) async throws {}
}

/// Wall-clock milliseconds (the instants notifications wait for are wall-clock times).
private func liveNow() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
