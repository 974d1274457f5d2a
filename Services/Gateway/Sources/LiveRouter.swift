import Foundation
import GatewayCore
import Messaging
import NIOCore
import Synchronization
import TimingWheel

/// Routes notifications to the gateway's live connections: which connections each user holds
/// (capped per user), which notifications wait for their instant (a ``WaitingRoom``), and the
/// hand-off of what goes out to each connection's buffer. No I/O: ``LiveHub`` feeds it from the
/// notifications stream and its clock; the writers of `GET /v1/me/events` drain the buffers.
///
/// **Order.** A writer passes a notification only when its id is above the last it sent (what
/// lets a catch-up from the inbox and the live path overlap without a duplicate), so each
/// connection must receive a user's notifications in id order. The waiting room decides that
/// order; the hand-off to the buffers happens under the same lock as the decision, so two
/// callers (the stream's arrivals, the clock's releases) can never hand off in the opposite
/// order to the one the room decided. (They did: a burst released at its instant was still
/// being handed off user by user when a newer notification of one of those users arrived and
/// went straight out; the writer then passed the older one as already sent — issue 76.)
final class LiveRouter: Sendable {
    /// What a connection receives.
    enum Item: Sendable {
        /// Notifications of the connection's user, in id order, as ready-made SSE frames (encoded
        /// when they arrived, so a burst released at one instant costs only the writes).
        case notifications([Frame])
        case ping
    }

    /// One notification's SSE frame.
    struct Frame: Sendable {
        var id: Int64
        var bytes: ByteBuffer
    }

    /// What the router reads of a notification to route it; the rest passes through as JSON.
    struct LiveNotification: Decodable, Sendable {
        var id: Int64
        var userId: String
        var type: String
        var createdAt: Date
    }

    /// A notification on its way out, with the event that brought it (for the trace).
    struct Pending: Sendable {
        var notification: LiveNotification
        var frame: Frame
        var envelope: Envelope?
        var arrived: Int64
    }

    /// What went out at once: the notifications, how many connections each user had then, and
    /// the users whose connection's buffer began to refuse (the first refused id), for the shell
    /// to log once the lock is let go.
    struct HandedOff: Sendable {
        var items: [Pending] = []
        var reached: [String: Int] = [:]
        var overflows: [(user: String, from: Int64)] = []
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

    /// The most live connections one user may hold at once (`CHRONIR_LIVE_STREAMS_PER_ACCOUNT`).
    let perUser: Int
    /// How many items one connection holds for a writer that has not caught up
    /// (`CHRONIR_LIVE_BUFFER`); the oldest are kept, and what does not fit is read from the inbox.
    let buffer: Int

    /// The connections, capped per user, with whose session and token each runs on (ended
    /// when the session is signed out or the token expires, ``endSignedOut(isRevoked:now:)``).
    private let connections: Mutex<LiveStreams<Sink>>
    private let nextID = Atomic<UInt64>(0)
    /// The waiting room; its lock is held from a decision to the end of its hand-off.
    private let room: Mutex<WaitingRoom<Pending>>
    private let telemetry: Telemetry
    /// Called with the ids of each hand-off between the room's decision and the hand-off itself
    /// (tests only: it lets a test interleave another arrival exactly there).
    private let beforeHandOff: (@Sendable ([Int64]) -> Void)?

    init(telemetry: Telemetry, perUser: Int = 10, buffer: Int = 1024, now: Int64,
         beforeHandOff: (@Sendable ([Int64]) -> Void)? = nil) {
        self.telemetry = telemetry
        self.perUser = perUser
        self.buffer = buffer
        self.room = Mutex(WaitingRoom<Pending>(now: now))
        self.connections = Mutex(LiveStreams(perUser: perUser))
        self.beforeHandOff = beforeHandOff
    }

    // MARK: Connections

    /// Live connections now.
    var count: Int { connections.withLock { $0.count } }

    /// Registers a connection of `user`, or nil when the user holds ``perUser`` already (checked
    /// and counted at once, so concurrent opens cannot pass the cap). The connection is
    /// unregistered when it is closed or released (``LiveConnection``).
    func open(user: String, session: String = "", expires: Date = .distantFuture) -> LiveConnection? {
        // The oldest items are kept: what a full buffer refuses is newer than all it holds, so the
        // writer sends what it holds, then reads the rest from the inbox (``Sink/dropped``).
        let (stream, continuation) = AsyncStream<Item>.makeStream(bufferingPolicy: .bufferingOldest(buffer))
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        let sink = Sink(continuation)
        guard connections.withLock({ $0.open(id, user: user, session: session, expires: expires, sink: sink) }) else {
            continuation.finish()
            return nil
        }
        return LiveConnection(router: self, id: id, user: user, stream: stream, sink: sink)
    }

    /// Ends connection `id` of `user` (its stream finishes); nothing when it is gone already.
    func unregister(_ id: UInt64, user: String) {
        connections.withLock { $0.close(id, user: user) }?.sink.continuation.finish()
    }

    /// Ends every connection whose session `isRevoked` (a sign-out, a reused refresh token, a
    /// password reset that took the account back) or whose access token expired by `now`: a
    /// stolen token's stream does not outlive the session. The client reconnects with a fresh
    /// token as after any drop (the web app does). Returns how many ended.
    @discardableResult
    func endSignedOut(isRevoked: (String) -> Bool, now: Date = Date()) -> Int {
        let ended = connections.withLock { $0.ended(isRevoked: isRevoked, now: now) }
        for (id, user) in ended { unregister(id, user: user) }
        if !ended.isEmpty { telemetry.counter("chronir_gateway_live_streams_ended_total").increment(by: ended.count) }
        return ended.count
    }

    /// Sends a keep-alive to every connection (proxies close silent connections).
    func ping() {
        let all = connections.withLock { $0.allSinks }
        // A ping that does not fit is not missed: the buffer is full of what will be written.
        for c in all { c.continuation.yield(.ping) }
    }

    // MARK: Notifications

    /// Notifications waiting for their instant.
    var waiting: Int { room.withLock { $0.count } }

    /// The earliest instant something waiting may go out (milliseconds), if anything waits.
    var nextInstant: Int64? { room.withLock { $0.nextInstant } }

    /// A notification arrives, due at `at` (milliseconds): it goes out now when its instant has
    /// come and nothing of its user waits in front of it, else it waits. `preloaded`: read from
    /// the waiting list at start (ignored when it waits already).
    func arrive(_ p: Pending, at: Int64, preloaded: Bool = false, now: Int64) -> HandedOff {
        room.withLock { r in
            if preloaded, r.isWaiting(p.notification.id, user: p.notification.userId) { return HandedOff() }
            return handOff(r.arrive(id: p.notification.id, user: p.notification.userId, at: at, item: p, now: now))
        }
    }

    /// Everything whose instant has come by `now` and that nothing waits in front of goes out.
    func release(now: Int64) -> HandedOff {
        room.withLock { r in handOff(r.release(now: now)) }
    }

    /// Withdraws waiting notifications of `user` (a fire taken back before its instant); what
    /// waited behind them may go out.
    func withdraw(user: String, ids: Set<Int64>, now: Int64) -> HandedOff {
        room.withLock { r in handOff(r.withdraw(user: user, ids: ids, now: now)) }
    }

    /// Hands notifications to their users' live connections, one hand-off per user however many
    /// there are. Called with the room's lock held (see the type's note on order).
    private func handOff(_ items: [Pending]) -> HandedOff {
        guard !items.isEmpty else { return HandedOff() }
        beforeHandOff?(items.map(\.notification.id))
        var order: [String] = []
        var byUser: [String: [Frame]] = [:]
        for p in items {
            let user = p.notification.userId
            if byUser[user] == nil { order.append(user) }
            byUser[user, default: []].append(p.frame)
        }
        var reached: [String: Int] = [:]
        var overflows: [(user: String, from: Int64)] = []
        for user in order {
            let targets = connections.withLock { $0.sinks(of: user) }
            let frames = byUser[user]!
            for c in targets {
                guard let first = frames.first?.id else { continue }
                switch c.continuation.yield(.notifications(frames)) {
                case .dropped:
                    let firstDrop = c.dropped.withLock { d -> Bool in
                        defer { d = min(d ?? first, first) }
                        return d == nil
                    }
                    telemetry.counter("chronir_gateway_live_frames_dropped_total").increment(by: frames.count)
                    // Once per overflow (until the writer resyncs), not once per refused item.
                    if firstDrop { overflows.append((user, first)) }
                case .enqueued:
                    c.firstAccepted.withLock { if $0 == nil { $0 = first } }
                default:
                    break
                }
            }
            reached[user] = targets.count
        }
        return HandedOff(items: items, reached: reached, overflows: overflows)
    }
}
