import CZMQ
import DequeModule
import Foundation
import Synchronization

/// One libzmq socket owned by one dedicated thread (czmq's `zactor` idea).
///
/// libzmq sockets are not thread-safe, so the rest of the code never touches the socket:
/// it enqueues commands (send, connect, subscribe, stop) into a locked queue and wakes the
/// thread through an `eventfd` that the thread polls next to the socket (with
/// ``SocketOptions/callerSends``, a caller may also send itself under `socketLock` while the
/// thread waits). Received messages
/// come out of ``messages`` (a bounded single-consumer async sequence). The socket is
/// created and bound on the caller's thread, then handed to the owning thread (libzmq
/// allows migrating a socket across a full memory barrier, which starting a thread is).
public final class SocketActor: Sendable {
    /// A name for logs and the thread.
    public let name: String
    /// The concrete endpoints bound (wildcard ports resolved), in the order of `options.binds`.
    public let boundEndpoints: [String]
    /// Messages received, in order. Single consumer.
    public let messages: SocketMessages
    /// Counters of what the socket did.
    public let stats = SocketStats()

    private let options: SocketOptions
    private let wakeFD: WakeFD
    /// The owning thread (`pthread_self()` as an integer), set when it starts.
    private let threadID = Atomic<UInt>(0)
    private let queue = Mutex(CommandQueue())
    private let mailbox: Mailbox<ReceivedMessage>
    private let finished = OneShot()
    private let callbacks: Callbacks?
    private let readsPrincipal: Bool
    private let context: ZMQContext
    nonisolated(unsafe) private let socket: RawSocket
    /// Held by whoever uses the socket: its thread while it works (released only around the
    /// wait for the next event), a caller sending directly (``SocketOptions/callerSends``).
    /// Taken before `queue` whenever both are held.
    private let socketLock = NSLock()
    /// Messages libzmq would not take yet (high-water mark, no peer), oldest first; under `socketLock`.
    nonisolated(unsafe) private var pending = Deque<[Data]>()
    /// The socket is closed (or its loop has ended); under `socketLock`.
    nonisolated(unsafe) private var socketClosed = false
    /// Whether the thread runs `onTick` now; written by the thread under `socketLock`.
    nonisolated(unsafe) private var tickingNow = false
    /// A caller sent directly while the thread was not ticking: the thread starts ticking
    /// again (an RPC client's deadline sweep must cover a request the thread never saw).
    private let tickRequested = Atomic<Bool>(false)
    /// With ``SocketOptions/callerSends``: the socket's `ZMQ_FD`, which the thread waits on
    /// (with plain `poll`, outside `socketLock`) instead of `zmq_poll`.
    private let notificationFD: Int32?
    /// What the socket thread alone reads and writes: the endpoints connected now and the CURVE
    /// keys applied (to rebuild the connections when a reload changes them).
    nonisolated(unsafe) private var curveState: CurveState
    /// The socket and its CURVE state, for ``rekey(_:)`` (on the socket thread only).
    var socketForRekey: RawSocket { socket }
    var curveStateForRekey: CurveState {
        get { curveState }
        set { curveState = newValue }
    }

    /// Delivery on the socket thread itself, for code that only resumes continuations
    /// (an RPC client): no hop through the mailbox. `onMessage` must be quick and must not block.
    public struct Callbacks: Sendable {
        /// Called for each received message, on the socket thread.
        public var onMessage: @Sendable (ReceivedMessage) -> Void
        /// Called about every `tickInterval`, on the socket thread (deadline sweeps). Returns
        /// whether more ticks are needed; when false the thread sleeps until the next command
        /// or direct send instead of waking every interval. Runs under the socket's lock.
        public var onTick: (@Sendable () -> Bool)?
        /// How often `onTick` runs.
        public var tickInterval: Duration
        /// Asked before reading: false stops reading (libzmq queues, then pushes back on peers)
        /// until ``SocketActor/wake()`` is called.
        public var canAccept: (@Sendable () -> Bool)?

        public init(tickInterval: Duration = .milliseconds(10), onTick: (@Sendable () -> Bool)? = nil,
                    canAccept: (@Sendable () -> Bool)? = nil,
                    onMessage: @escaping @Sendable (ReceivedMessage) -> Void) {
            self.onMessage = onMessage
            self.onTick = onTick
            self.tickInterval = tickInterval
            self.canAccept = canAccept
        }
    }

    private struct CommandQueue {
        var commands = Deque<Command>()
        /// The thread is blocked (or about to block) in poll: the next command must wake it.
        var asleep = false
        var stopped = false
    }

    private enum Command {
        case send([Data])
        case connect(String)
        case disconnect(String)
        case subscribe(Data)
        case unsubscribe(Data)
        /// The bus keys were reloaded: apply them if they change this socket's keys.
        case rekey(BusSecurity)
        /// A job of a task that prefers this socket's thread (``SocketActor`` as a `TaskExecutor`).
        case run(UnownedJob)
        case stop
    }

    /// Creates the socket, applies `options`, binds and connects, and starts its thread.
    /// Throws when a bind fails (address in use, bad endpoint).
    public init(context: ZMQContext, options: SocketOptions, name: String, callbacks: Callbacks? = nil) throws {
        self.name = name
        self.callbacks = callbacks
        self.options = options
        self.readsPrincipal = options.curve == .server && context.security != nil
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw ZMQError(code: errno, operation: "eventfd") }
        let wake = WakeFD(fd)
        self.wakeFD = wake
        self.mailbox = Mailbox(capacity: options.mailboxCapacity, onDrained: { wake.signal() })
        self.messages = SocketMessages(mailbox: mailbox)

        let raw: RawSocket
        do {
            raw = try RawSocket(context: context, type: options.type)
        } catch {
            Glibc.close(fd)
            throw error
        }
        // Names over several replicas become one endpoint per address (EndpointDiscovery).
        let discovery = (options.discoveryInterval ?? context.discoveryInterval).flatMap { interval -> (EndpointDiscovery, Duration)? in
            let d = EndpointDiscovery(options.connects, resolve: options.resolve ?? EndpointDiscovery.addresses(of:))
            return d.hasNames && interval > .zero ? (d, interval) : nil
        }
        // The first lookup runs here, when the socket is made (at a service's start).
        let resolved = discovery?.0.resolved()
        let connects = discovery.map { $0.0.flatten(resolved ?? [:]) } ?? options.connects
        var bound: [String] = []
        var notifyFD: Int32? = nil
        do {
            notifyFD = try raw.configure(options, context: context, discovered: discovery != nil)
            for endpoint in options.binds { bound.append(try raw.bind(endpoint)) }
            for endpoint in connects { try raw.connect(endpoint) }
        } catch {
            raw.close(lingerMilliseconds: 0)
            Glibc.close(fd)
            throw error
        }
        self.socket = raw
        self.notificationFD = notifyFD
        self.boundEndpoints = bound
        self.context = context
        self.curveState = CurveState(role: options.curve, security: context.security, connected: connects)
        var rekey: (@Sendable (BusSecurity) -> Void)? = nil
        if options.curve != .none {
            rekey = { [weak self] (security: BusSecurity) -> Void in
                guard let self else { return }
                _ = self.enqueue(.rekey(security))
            }
        }
        context.opened(ObjectIdentifier(self), name: name, rekey: rekey)

        let thread = Thread { [self] in self.runLoop() }
        thread.name = "zmq:\(name)"
        thread.start()
        if let (d, interval) = discovery { startDiscovery(d, every: interval, resolved: resolved ?? [:]) }
    }

    // MARK: - API for async code

    /// Queues a multipart message for sending. Never blocks; when the queue is over its
    /// limit the oldest waiting message is dropped and counted. With
    /// ``SocketOptions/callerSends`` the caller sends it itself when the socket is free.
    public func send(_ frames: [Data]) {
        if notificationFD != nil, sendOnCallersThread(frames) { return }
        enqueue(.send(frames))
    }

    /// Sends `frames` on the caller's thread when the socket is not in use (a `tryLock`: a busy
    /// thread is awake and takes the message from the queue instead; when another caller holds
    /// the lock, queueing wakes the thread if it sleeps) and
    /// nothing queued would be overtaken (a message, or a connect or rekey it should follow).
    /// False when the message must be queued.
    private func sendOnCallersThread(_ frames: [Data]) -> Bool {
        guard !isCurrentThread, socketLock.try() else { return false }
        defer { socketLock.unlock() }
        guard !socketClosed, pending.isEmpty,
              queue.withLock({ $0.commands.isEmpty && !$0.stopped }) else { return false }
        do {
            guard try socket.send(frames) else { return false }
            stats.sent.add(1, ordering: .relaxed)
            stats.sentByCaller.add(1, ordering: .relaxed)
        } catch {
            stats.errors.add(1, ordering: .relaxed)
        }
        // The thread never saw this message: if it has stopped ticking, it must start again
        // (the thread reads the request under this lock before it sleeps, or is woken below).
        let needsTick = callbacks?.onTick != nil && !tickingNow
        if needsTick { tickRequested.store(true, ordering: .releasing) }
        // The send may have consumed the edge of `ZMQ_FD` the sleeping thread waits for (a
        // reply that arrived meanwhile, or the context's stop): read the events and wake the
        // thread when there is something to do. A thread that is not asleep reads them itself
        // before it sleeps, under this lock, so it cannot miss them.
        let waiting = socket.events().map { $0 & Int32(ZMQ_POLLIN) != 0 && readable } ?? true
        if needsTick || waiting, queue.withLock({ $0.asleep }) {
            wakeFD.signal()
        }
        return true
    }

    /// Connects to one more endpoint.
    public func connect(_ endpoint: String) { enqueue(.connect(endpoint)) }

    /// Disconnects from an endpoint.
    public func disconnect(_ endpoint: String) { enqueue(.disconnect(endpoint)) }

    /// Adds a SUB topic prefix.
    public func subscribe(_ prefix: Data) { enqueue(.subscribe(prefix)) }

    /// Removes a SUB topic prefix.
    public func unsubscribe(_ prefix: Data) { enqueue(.unsubscribe(prefix)) }

    /// Stops the thread, closes the socket (after `lingerMilliseconds` for unsent messages)
    /// and finishes ``messages``. Waits until the socket is closed. Idempotent.
    public func close() async {
        enqueue(.stop)
        await finished.wait()
    }

    /// Wakes the socket thread so it looks at the socket again (after `canAccept` turned true).
    public func wake() {
        wakeFD.signal()
    }

    /// Whether the caller runs on this socket's thread.
    public var isCurrentThread: Bool {
        threadID.load(ordering: .acquiring) == UInt(pthread_self())
    }

    /// Ends ``messages`` now (the consumer's loop finishes) while the socket keeps sending:
    /// a server stops taking requests at shutdown but still answers those in flight.
    public func finishMessages() { mailbox.finish() }

    /// Whether ``close()`` has completed.
    public var isClosed: Bool { finished.hasFired }

    /// Runs `job` on the socket thread, between its reads and sends; once the thread has
    /// stopped, on the global concurrent executor instead (a job is never dropped: a task
    /// whose resumption was lost would wait forever).
    func enqueueJob(_ job: UnownedJob) {
        if !enqueue(.run(job)) { globalConcurrentExecutor.enqueue(job) }
    }

    /// Queues `command` and wakes the thread if it sleeps; false when the thread has stopped
    /// taking commands (a refused send is counted as dropped).
    @discardableResult
    private func enqueue(_ command: Command) -> Bool {
        let (signal, accepted) = queue.withLock { q -> (Bool, Bool) in
            if q.stopped { return (false, false) }
            if case .stop = command { q.stopped = true }
            q.commands.append(command)
            guard q.asleep else { return (false, true) }
            q.asleep = false
            return (true, true)
        }
        if !accepted, case .send = command { stats.dropped.add(1, ordering: .relaxed) }
        if signal { wakeFD.signal() }
        return accepted
    }

    // MARK: - The socket thread

    private func runLoop() {
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        var running = true
        let clock = ContinuousClock()
        var nextTick = clock.now + (callbacks?.tickInterval ?? .seconds(3600))
        var ticking = callbacks?.onTick != nil
        while running {
            // The tick runs under the lock, so that `tickingNow`, which a caller sending directly
            // reads under it, is never stale: a tick that found nothing to do cannot overlap a
            // caller's request it did not see.
            socketLock.lock()
            if ticking, let callbacks, let onTick = callbacks.onTick, clock.now >= nextTick {
                ticking = onTick()
                nextTick = clock.now + callbacks.tickInterval
            }
            let batch = queue.withLock { q -> Deque<Command> in
                let b = q.commands
                q.commands.removeAll(keepingCapacity: true)
                return b
            }
            // A command, or a request a caller sent directly, restarts a stopped tick.
            let requested = tickRequested.exchange(false, ordering: .acquiring)
            if !batch.isEmpty || requested, let callbacks, callbacks.onTick != nil, !ticking {
                ticking = true
                nextTick = clock.now + callbacks.tickInterval
            }
            for command in batch {
                if !perform(command) { running = false }
            }
            tickingNow = ticking
            flush()
            // The context is being terminated (ETERM): close now, or zmq_ctx_term waits forever
            // while this loop spins on the failing socket.
            guard running, receiveAvailable() else {
                socketClosed = true
                socketLock.unlock()
                break
            }
            let timeout = ticking ? Self.milliseconds(clock.now.duration(to: nextTick)) : -1
            let live: Bool
            if let notificationFD {
                // The socket's own readiness, read last under the lock: a caller sending after the
                // lock is released reads it again and wakes the thread (`sendOnCallersThread`).
                guard let events = socket.events() else {
                    socketClosed = true
                    socketLock.unlock()
                    break
                }
                let ready = (events & Int32(ZMQ_POLLIN) != 0 && readable) || (events & Int32(ZMQ_POLLOUT) != 0 && !pending.isEmpty)
                let idle = !ready && fallAsleep()
                socketLock.unlock()
                live = ready || waitForNotification(notificationFD, timeoutMilliseconds: idle ? timeout : 0)
                if idle { queue.withLock { $0.asleep = false } }
            } else {
                let wantOut = !pending.isEmpty
                let idle = fallAsleep()
                socketLock.unlock()
                live = poll(wantOut: wantOut, timeoutMilliseconds: idle ? timeout : 0)
                if idle { queue.withLock { $0.asleep = false } }
            }
            if !live { break }
        }
        closeDown()
    }

    /// After the loop, however it ended (a stop, or the context terminating): nothing more is
    /// taken, what is queued is handed on or counted, and the socket closes.
    private func closeDown() {
        // However the loop ended (a stop, or the context terminating), nothing more is taken:
        // jobs still queued, or queued from now on, run on the global executor (a task whose
        // resumption was lost would wait forever); sends still queued are dropped and counted.
        socketLock.lock()
        let leftover = queue.withLock { q -> Deque<Command> in
            q.stopped = true
            let rest = q.commands
            q.commands.removeAll()
            return rest
        }
        for command in leftover {
            switch command {
            case .run(let job): globalConcurrentExecutor.enqueue(job)
            case .send: stats.dropped.add(1, ordering: .relaxed)
            default: break
            }
        }
        flush()
        socketClosed = true
        socket.close(lingerMilliseconds: options.lingerMilliseconds)
        socketLock.unlock()
        context.closed(ObjectIdentifier(self))
        wakeFD.close()
        mailbox.finish()
        finished.fire()
    }

    /// A poll's timeout for `left`, rounded up: a remainder under a millisecond must not become
    /// a 0 ms poll, or the thread spins until the tick is due. 0 once it is due.
    static func milliseconds(_ left: Duration) -> Int {
        let nanos = left.components.seconds * 1_000_000_000 + left.components.attoseconds / 1_000_000_000
        return nanos <= 0 ? 0 : Int((nanos + 999_999) / 1_000_000)
    }

    /// Marks the thread asleep unless commands are queued (then it polls without waiting).
    /// Only when nothing is queued does the thread sleep; producers signal the eventfd only
    /// then, so a busy socket costs no wake-up syscalls.
    private func fallAsleep() -> Bool {
        queue.withLock { q -> Bool in
            if !q.commands.isEmpty { return false }
            q.asleep = true
            return true
        }
    }

    /// Carries out one command on the socket thread (under `socketLock`); false for `.stop`.
    private func perform(_ command: Command) -> Bool {
        switch command {
        case .send(let frames):
            pending.append(frames)
            if pending.count > options.sendQueueLimit {
                pending.removeFirst()
                stats.dropped.add(1, ordering: .relaxed)
            }
        case .connect(let endpoint):
            do {
                try socket.connect(endpoint)
                curveState.connected.append(endpoint)
            } catch { stats.errors.add(1, ordering: .relaxed) }
        case .disconnect(let endpoint):
            do { try socket.disconnect(endpoint) } catch { stats.errors.add(1, ordering: .relaxed) }
            curveState.connected.removeAll { $0 == endpoint }
        case .rekey(let security):
            rekey(security)
        case .subscribe(let prefix):
            do { try socket.set(ZMQ_SUBSCRIBE, bytes: [UInt8](prefix)) } catch { stats.errors.add(1, ordering: .relaxed) }
        case .unsubscribe(let prefix):
            do { try socket.set(ZMQ_UNSUBSCRIBE, bytes: [UInt8](prefix)) } catch { stats.errors.add(1, ordering: .relaxed) }
        case .run(let job):
            job.runSynchronously(on: asUnownedTaskExecutor())
        case .stop:
            return false
        }
        return true
    }

    /// Sends what is pending, oldest first, until libzmq would block (under `socketLock`).
    private func flush() {
        while let frames = pending.first {
            do {
                guard try socket.send(frames) else { return }
                stats.sent.add(1, ordering: .relaxed)
            } catch {
                // EHOSTUNREACH and the like: the message cannot be delivered; drop it.
                stats.errors.add(1, ordering: .relaxed)
            }
            pending.removeFirst()
        }
    }

    /// Receives what is queued; false when the context is terminating.
    private func receiveAvailable() -> Bool {
        var count = 0
        while count < 1024, readable {
            let message: ReceivedMessage?
            do {
                message = try socket.receive(maxFrameBytes: options.maxFrameBytes, readPrincipal: readsPrincipal)
            } catch {
                stats.errors.add(1, ordering: .relaxed)
                return (error as? ZMQError)?.code != ETERM
            }
            guard let m = message else { return true }
            count += 1
            stats.received.add(1, ordering: .relaxed)
            if m.oversizedBytes != nil { stats.oversized.add(1, ordering: .relaxed) }
            if let callbacks {
                callbacks.onMessage(m)
            } else if !mailbox.push(m) {
                return true
            }
        }
        return true
    }

    /// Whether the consumer takes more messages now.
    private var readable: Bool {
        if let callbacks { return callbacks.canAccept?() ?? true }
        return mailbox.hasRoom
    }

    /// Waits for the socket or a wake-up; false when the context is being terminated (ETERM).
    private func poll(wantOut: Bool, timeoutMilliseconds: Int) -> Bool {
        var events: Int16 = 0
        if readable { events |= Int16(ZMQ_POLLIN) }
        if wantOut { events |= Int16(ZMQ_POLLOUT) }
        var items = [
            zmq_pollitem_t(socket: socket.handle, fd: 0, events: events, revents: 0),
            zmq_pollitem_t(socket: nil, fd: wakeFD.fd, events: Int16(ZMQ_POLLIN), revents: 0),
        ]
        let rc = zmq_poll(&items, 2, timeoutMilliseconds)
        if rc < 0 {
            let code = zmq_errno()
            if code == ETERM { return false }
            if code != EINTR { stats.errors.add(1, ordering: .relaxed) }
        }
        if items[1].revents & Int16(ZMQ_POLLIN) != 0 {
            var value: UInt64 = 0
            _ = read(wakeFD.fd, &value, 8)
        }
        return true
    }

    /// Waits for the socket's `ZMQ_FD` or a wake-up (``SocketOptions/callerSends``), without
    /// `socketLock`; always true (a terminating context shows in the next `events()`).
    private func waitForNotification(_ fd: Int32, timeoutMilliseconds: Int) -> Bool {
        var fds = (pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD.fd, events: Int16(POLLIN), revents: 0))
        let rc = withUnsafeMutablePointer(to: &fds) {
            $0.withMemoryRebound(to: pollfd.self, capacity: 2) { Glibc.poll($0, 2, Int32(clamping: timeoutMilliseconds)) }
        }
        if rc < 0, errno != EINTR { stats.errors.add(1, ordering: .relaxed) }
        if fds.1.revents & Int16(POLLIN) != 0 {
            var value: UInt64 = 0
            _ = read(wakeFD.fd, &value, 8)
        }
        return true
    }
}
