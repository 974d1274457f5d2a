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
/// in the ``LiveRouter``'s waiting room and goes out at that instant; each user's notifications
/// go out in id order. At start the hub loads what is already waiting, so a restart loses none
/// of it. The hub is the shell: it reads the stream and the clock; the router decides and hands off.
final class LiveHub: EventApplier, Service {
    typealias Item = LiveRouter.Item
    typealias Frame = LiveRouter.Frame
    typealias Pending = LiveRouter.Pending
    typealias LiveNotification = LiveRouter.LiveNotification

    /// The connections and what waits for its instant.
    let router: LiveRouter
    private let start = Mutex<Int64?>(nil)
    private let notifications: RPCClient
    private let telemetry: Telemetry
    private let due = WakeSignal()
    /// The database's clock, which instants are set by (``LiveClock``).
    let clock: LiveClock
    /// How often ``clock`` is read again (`CHRONIR_CLOCK_CHECK_INTERVAL`).
    private let clockInterval: Duration
    /// Ids loaded from the waiting list at start: the stream may bring them again.
    private let preloaded = Mutex<Set<Int64>>([])

    /// The most live connections one user may hold at once (`CHRONIR_LIVE_STREAMS_PER_ACCOUNT`).
    var perUser: Int { router.perUser }

    /// A pause before each item a live connection writes (`CHRONIR_FAILPOINT_LIVE_WRITE_DELAY`,
    /// tests only): a client slower than its notifications, so the buffer fills.
    let writeDelay: Duration

    init(notifications: RPCClient, telemetry: Telemetry, perUser: Int = 10, buffer: Int = 1024, writeDelay: Duration = .zero,
         clock: LiveClock = LiveClock(), clockInterval: Duration = .seconds(10)) {
        self.notifications = notifications
        self.writeDelay = writeDelay
        self.telemetry = telemetry
        self.clock = clock
        self.clockInterval = clockInterval
        self.router = LiveRouter(telemetry: telemetry, perUser: perUser, buffer: buffer, now: clock.now())
    }

    /// Live connections now.
    var count: Int { router.count }

    /// Registers a connection of `user`, or nil when the user holds ``perUser`` already.
    func open(user: String, session: String = "", expires: Date = .distantFuture) -> LiveConnection? {
        router.open(user: user, session: session, expires: expires)
    }

    /// Ends every connection whose session `isRevoked` or whose access token expired by `now`
    /// (``LiveRouter/endSignedOut(isRevoked:now:)``).
    @discardableResult
    func endSignedOut(isRevoked: (String) -> Bool, now: Date = Date()) -> Int {
        router.endSignedOut(isRevoked: isRevoked, now: now)
    }

    /// Sends a keep-alive to every connection (proxies close silent connections).
    func ping() { router.ping() }

    /// Notifications waiting for their instant.
    var waiting: Int { router.waiting }

    /// Releases waiting notifications at their instants, and reads the database's clock every
    /// ``clockInterval``.
    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: self.clockInterval)
                        await self.measureClock()
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        let now = self.clock.now()
                        self.trace(self.router.release(now: now))
                        let next = self.router.nextInstant ?? (now + 1000)
                        await self.due.wait(timeout: .milliseconds(max(1, min(next - self.clock.now(), 1000))))
                    }
                }
            }
        }
    }

    /// Reads the database's clock through three `notifications.head` calls and keeps the
    /// fastest (``LiveClock``); returns the stream's head from the last answer.
    @discardableResult
    func measureClock() async -> Int64? {
        var readings: [LiveClock.Reading] = []
        var head: Int64?
        for _ in 0..<3 {
            let sent = monotonicMilliseconds()
            guard let answer = try? await notifications.call(NotificationsMethods.Head.self, Empty(), timeout: .seconds(3)) else { continue }
            let answered = monotonicMilliseconds()
            head = answer.head
            if let db = answer.databaseNow { readings.append(.init(sent: sent, database: db, answered: answered)) }
        }
        let before = clock.isMeasured ? nil : clock.wallOffsetMilliseconds
        clock.record(readings)
        if let before, clock.isMeasured, abs(clock.wallOffsetMilliseconds) > 250 {
            telemetry.logger.warning("this host's clock is off from the database's; live notifications ring by the database's",
                                     metadata: ["offsetMs": "\(clock.wallOffsetMilliseconds)", "before": "\(before)"])
        }
        telemetry.gauge("chronir_gateway_clock_offset_ms").record(clock.wallOffsetMilliseconds)
        return head
    }

    /// Live streams carry the moment only (the inbox is the record): a rewound stream is followed.
    var followsRewinds: Bool { true }

    func checkpoint(stream: String) async throws -> Int64 {
        if let s = start.withLock({ $0 }) { return s }
        // The clock first: what was loaded waits by it. Its calls bring the head too; asked
        // again only when none of them was answered.
        let measured = await measureClock()
        var head = measured ?? 0
        if measured == nil {
            head = try await notifications.call(NotificationsMethods.Head.self, Empty(), timeout: .seconds(3)).head
        }
        // What is already waiting was published before the head: load it (the stream may bring
        // some of it again; a repeat is dropped).
        var after: Int64 = 0
        var more = true
        var loaded = 0
        while more {
            let page = try await notifications.call(NotificationsMethods.Waiting.self, .init(after: after, limit: 2_000, maxBytes: notifications.frameLimit),
                                                timeout: .seconds(10))
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
                trace(router.withdraw(user: w.userId, ids: Set(w.ids), now: clock.now()))
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
        let now = clock.now()
        let at = Int64((n.createdAt.timeIntervalSince1970 * 1000).rounded(.up))
        let bytes = NotificationRoutes.frame(id: n.id, type: n.type, json: json)
        let pending = Pending(notification: n, frame: Frame(id: n.id, bytes: bytes), envelope: envelope, arrived: now)
        let out = router.arrive(pending, at: at, preloaded: isPreloaded, now: now)
        if isPreloaded { preloaded.withLock { _ = $0.insert(n.id) } }
        trace(out)
        if at > now { due.signal() }
    }

    /// Ends the trace of each notification handed off (the last hop of a traced message).
    private func trace(_ out: LiveRouter.HandedOff) {
        for o in out.overflows {
            telemetry.logger.notice("live stream: a connection's buffer is full; what it refuses is read from the inbox",
                                    metadata: ["user": "\(o.user)", "from": "\(o.from)", "buffer": "\(router.buffer)"])
        }
        guard !out.items.isEmpty else { return }
        let now = clock.now()
        for p in out.items {
            guard let envelope = p.envelope else { continue }
            let span = telemetry.startProcessSpan(envelope, destination: "gateway.live", kind: .consumer)
            if span.isRecording {
                span.attributes["chronir.live.connections"] = out.reached[p.notification.userId] ?? 0
                span.attributes["chronir.live.waited_ms"] = Int(now - p.arrived)
            }
            span.end()
        }
    }

    /// Nothing is kept (the inbox is the record); said, since a client on this gateway misses it live.
    func deadLetter(stream: String, seq: Int64, type: String?, raw: String, reason: String) async throws {
        telemetry.logger.notice("live stream: an event could not be applied; its notification reaches clients from the inbox only",
                                metadata: ["stream": "\(stream)", "seq": "\(seq)", "type": "\(type ?? "?")", "reason": "\(reason)"])
    }

    /// Nothing is kept; said, since clients on this gateway miss what was skipped until they read the inbox.
    func skip(stream: String, to seq: Int64, reason: String) async throws {
        telemetry.logger.notice("live stream: events skipped without being sent; clients read them from the inbox when they resume",
                                metadata: ["stream": "\(stream)", "to": "\(seq)", "reason": "\(reason)"])
    }
}
