import CoreMetrics
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Tracing
import ZMQ

/// Answers requests on a bound ROUTER socket.
///
/// The socket thread decodes and checks each request, then starts one task for it (at most
/// `maxConcurrent` at once; beyond that it stops reading and libzmq's queue pushes back on
/// clients). A handler registered with ``HandlerPlacement/socketThread`` runs in a task that
/// prefers the socket's thread as its executor: the request is handled, and the reply
/// encoded and queued, on the thread that owns the socket, with no hop between threads.
/// Bad input never stops the server: oversized frames get `CA024`, undecodable envelopes
/// `CA020`, unknown types `CA020` naming the type, each logged and counted in
/// `chronir_messages_rejected_total{reason}`.
/// Requests whose deadline has passed are dropped unanswered (nobody waits for them).
/// Replies use the layout of the request (``EnvelopeFrame``: JSON or binary).
public final class RPCServer: Service, Sendable {
    /// The name of the serving service (reply `source`, logs, spans).
    public let serviceName: String
    /// The bound endpoints (wildcard ports resolved).
    public var endpoints: [String] { socketBox.socket.boundEndpoints }

    private let router: RPCRouter
    private let source: String
    private let telemetry: Telemetry
    private let idempotency = IdempotencyCache()
    private let maxFrameBytes: Int
    private let maxConcurrent: Int
    /// The most requests in progress for one actor (an account the gateway acts for), 0: no cap.
    private let maxPerActor: Int
    private let perActor = Mutex<[String: Int]>([:])
    /// Callers' clock offsets, to read their deadlines on this server's clock.
    private let clockOffsets = PeerClockOffsets()
    /// The offset last logged per caller (a change of more than a second is logged again).
    private let loggedOffsets = Mutex<[String: Int64]>([:])
    private let inFlight = Atomic<Int>(0)
    private let accepting = Atomic<Bool>(false)
    private let drained = Mutex<CheckedContinuation<Void, Never>?>(nil)
    private let perType = Mutex<[String: TypeMetrics]>([:])
    private let socketBox = SocketBox()
    private let secured: Bool
    /// Turns an error a handler let through into the ``ServiceError`` it means (a database
    /// outage into `CA022`), or nil for `CA023`.
    private let translate: (@Sendable (any Error) -> ServiceError?)?

    private final class SocketBox: Sendable {
        nonisolated(unsafe) var socket: SocketActor!
    }

    private struct TypeMetrics: Sendable {
        let ok: Counter
        let seconds: CoreMetrics.Timer
    }

    /// Binds a ROUTER to `binds`. Requests are taken once ``run()`` starts. `callerSends`: a
    /// handler that finishes on the pool sends its reply itself when the socket's thread is idle
    /// (``SocketOptions/callerSends``).
    public init(
        context: ZMQContext, serviceName: String, instance: String, binds: [String], router: RPCRouter,
        telemetry: Telemetry, maxFrameBytes: Int = 1 << 20, maxConcurrent: Int = 1024, maxPerActor: Int = 0,
        translate: (@Sendable (any Error) -> ServiceError?)? = nil, callerSends: Bool = true
    ) throws {
        self.maxPerActor = max(0, maxPerActor)
        self.translate = translate
        self.serviceName = serviceName
        self.source = "\(serviceName)/\(instance)"
        self.router = router
        self.telemetry = telemetry
        self.maxFrameBytes = maxFrameBytes
        self.maxConcurrent = maxConcurrent
        var options = SocketOptions(type: .router)
        options.binds = binds
        options.curve = .server
        self.secured = context.security != nil
        options.maxFrameBytes = maxFrameBytes
        options.lingerMilliseconds = 500
        // Replies are independent of each other: a handler that finishes on the pool sends its
        // reply itself when the socket thread is idle, instead of waking it to send it.
        options.callerSends = callerSends
        let box = socketBox
        let callbacks = SocketActor.Callbacks(
            canAccept: { [weak self] in
                guard let self else { return false }
                return self.accepting.load(ordering: .relaxed) && self.inFlight.load(ordering: .relaxed) < self.maxConcurrent
            },
            onMessage: { [weak self] message in self?.dispatch(message) }
        )
        box.socket = try SocketActor(context: context, options: options, name: "rpc:\(serviceName)", callbacks: callbacks)
    }

    private var socket: SocketActor { socketBox.socket }

    /// Whether the caller runs on this server's socket thread (where handlers registered
    /// ``HandlerPlacement/socketThread`` run).
    public var isOnSocketThread: Bool { socket.isCurrentThread }

    /// Serves until graceful shutdown: then stops taking requests, finishes those in flight,
    /// and closes the socket.
    public func run() async throws {
        telemetry.logger.info("serving requests", metadata: ["endpoints": "\(endpoints)", "types": "\(router.types.count)"])
        accepting.store(true, ordering: .relaxed)
        socket.wake()
        try? await gracefulShutdown()
        accepting.store(false, ordering: .relaxed)
        await waitForInFlight()
        await socket.close()
    }

    /// Stops serving immediately (tests that simulate a crashed service).
    public func close() async {
        accepting.store(false, ordering: .relaxed)
        await socket.close()
    }

    private func waitForInFlight() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            drained.withLock { $0 = c }
            if inFlight.load(ordering: .acquiring) == 0, let w = drained.withLock({ d -> CheckedContinuation<Void, Never>? in
                let w = d
                d = nil
                return w
            }) {
                w.resume()
            }
        }
    }

    // MARK: - Handling one message

    /// A request that passed the checks made on the socket thread.
    private struct Accepted: Sendable {
        let identity: Data
        let request: Envelope
        let handler: RPCRouter.RawHandler
        let placement: HandlerPlacement
        let caller: String?
        let layout: EnvelopeFrame
        let attachment: Data?
        /// The caller's deadline on this process's monotonic clock (``RequestDeadline``).
        let deadline: ContinuousClock.Instant?
    }

    /// On the socket thread: decodes and checks the request (frame, envelope, deadline, type,
    /// caller), answers what fails there at once, and starts a task for the rest, on the
    /// socket's thread for ``HandlerPlacement/socketThread`` handlers and on the global
    /// executor for the others.
    ///
    /// One actor (an account the gateway acts for) holds at most `maxPerActor` of the
    /// server's `maxConcurrent` handler slots; past it, its requests are answered 429 `CA019` at
    /// once, so one account's slow requests cannot take every slot from the others (issue 74).
    private func dispatch(_ message: ReceivedMessage) {
        guard let accepted = accept(message) else { return }
        let actor = maxPerActor > 0 ? accepted.request.actor.flatMap { $0.isEmpty ? nil : $0 } : nil
        if let actor {
            let admitted = perActor.withLock { held -> Bool in
                guard held[actor, default: 0] < maxPerActor else { return false }
                held[actor, default: 0] += 1
                return true
            }
            guard admitted else {
                reject("actor_busy", "\(actor) has \(maxPerActor) requests in progress")
                reply(to: accepted.identity,
                      error: .rateLimited("this account has \(maxPerActor) requests in progress on \(serviceName); try again in a moment", retryAfter: 1),
                      correlationId: accepted.request.id, layout: accepted.layout)
                return
            }
        }
        inFlight.add(1, ordering: .relaxed)
        Task(executorPreference: accepted.placement == .socketThread ? socket : nil) {
            await self.serve(accepted)
            if let actor {
                self.perActor.withLock { held in
                    if let n = held[actor] { held[actor] = n > 1 ? n - 1 : nil }
                }
            }
            let left = self.inFlight.subtract(1, ordering: .acquiringAndReleasing).newValue
            if left == self.maxConcurrent - 1 { self.socket.wake() }
            if left == 0, !self.accepting.load(ordering: .relaxed),
               let w = self.drained.withLock({ d -> CheckedContinuation<Void, Never>? in
                   let w = d
                   d = nil
                   return w
               }) {
                w.resume()
            }
        }
    }

    /// Logs a caller whose clock is off from this server's, once per change of a second or more.
    private func noteOffset(source: String, _ offset: Int64) {
        let changed = loggedOffsets.withLock { logged -> Bool in
            if let last = logged[source], abs(last - offset) < 1_000 { return false }
            if logged.count >= PeerClockOffsets.maxCallers { logged.removeAll() }
            logged[source] = offset
            return true
        }
        guard changed else { return }
        telemetry.logger.warning("a caller's clock is off from this server's; its deadlines are read with the offset",
                                 metadata: ["source": "\(source)", "offsetMs": "\(offset)"])
    }

    private func accept(_ message: ReceivedMessage) -> Accepted? {
        // A routing id, the envelope, and with ``EnvelopeHeader/attachment`` the raw bytes.
        guard (2...3).contains(message.frames.count) else {
            reject("malformed", "a request is a routing id, one envelope frame and at most one attachment")
            return nil
        }
        let identity = message.frames[0]
        let body = message.frames[1]
        let layout = EnvelopeFrame.of(body)
        if let size = message.oversizedBytes {
            reject("oversized", "request of \(size) bytes exceeds the \(maxFrameBytes)-byte limit")
            reply(to: identity, error: ServiceError(.payloadTooLarge, "message of \(size) bytes exceeds the \(maxFrameBytes)-byte limit"),
                  correlationId: nil, layout: layout)
            return nil
        }
        let request: Envelope
        do {
            request = try Envelope.decode(body)
        } catch {
            reject("malformed", "\(error)")
            reply(to: identity, error: ServiceError(.messageInvalid, "malformed envelope: \(error)"), correlationId: nil, layout: layout)
            return nil
        }
        let attachment = message.frames.count == 3 ? message.frames[2] : nil
        let declared = request.headers[EnvelopeHeader.attachment]
        guard declared == attachment.map({ String($0.count) }) else {
            let why = "the attachment header says \(declared ?? "none") bytes; the frames carry \(attachment.map { "\($0.count)" } ?? "none")"
            reject("malformed", why)
            reply(to: identity, error: ServiceError(.messageInvalid, "malformed request: \(why)"), correlationId: request.id, layout: layout)
            return nil
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        // The deadline is by the caller's clock: read on this one (``PeerClockOffsets``).
        let offset = clockOffsets.observe(source: request.source, sentAt: request.occurredAt, receivedAt: now)
        if offset != 0 { noteOffset(source: request.source, offset) }
        let deadlineMs = request.headers[EnvelopeHeader.deadline].flatMap(Int64.init)
        if let deadlineMs, deadlineMs + offset < now {
            telemetry.counter("chronir_messages_rejected_total", [("reason", "expired"), ("socket", "rpc-server")]).increment()
            telemetry.logger.debug("dropped a request past its deadline", metadata: ["type": "\(request.type)", "id": "\(request.id)"])
            return nil
        }
        let deadline = deadlineMs.map { ContinuousClock.now + .milliseconds($0 + offset - now) }
        guard let handler = router.handlers[request.type] else {
            reject("unknown_type", "unknown message type \"\(request.type)\"")
            reply(to: identity, error: ServiceError(.messageInvalid, "unknown message type \"\(request.type)\""),
                  correlationId: request.id, layout: layout)
            return nil
        }
        if let refusal = BusPolicy.refusal(type: request.type, access: router.access[request.type] ?? .services,
                                           actor: request.actor, caller: message.principal, secured: secured) {
            reject("caller_not_allowed", refusal)
            reply(to: identity, error: ServiceError(.callerNotAllowed, refusal), correlationId: request.id, layout: layout)
            return nil
        }
        return Accepted(identity: identity, request: request, handler: handler, placement: router.placements[request.type] ?? .pool,
                        caller: message.principal, layout: layout, attachment: attachment, deadline: deadline)
    }

    private func serve(_ a: Accepted) async {
        let key = a.request.headers[EnvelopeHeader.idempotencyKey].map { "\(a.request.actor ?? "-")|\(a.request.type)|\($0)" }
        if let key, case .replay(let cached) = await idempotency.claim(key) {
            telemetry.counter("chronir_rpc_idempotent_replays_total", [("type", a.request.type)]).increment()
            if let cached, var replay = try? Envelope.decode(cached) {
                replay.correlationId = a.request.id
                socket.send([a.identity, replay.encoded(as: a.layout)])
            }
            return
        }
        let frame = await RequestDeadline.$current.withValue(a.deadline) {
            await process(a.request, handler: a.handler, caller: a.caller, layout: a.layout, attachment: a.attachment)
        }
        if let key { idempotency.finish(key, reply: frame) }
        if let frame { socket.send([a.identity, frame]) }
    }

    private func metrics(for type: String) -> TypeMetrics {
        if let m = perType.withLock({ $0[type] }) { return m }
        let m = TypeMetrics(ok: telemetry.counter("chronir_rpc_requests_total", [("type", type), ("outcome", "ok")]),
                            seconds: telemetry.timer("chronir_rpc_handle_seconds", [("type", type)]))
        perType.withLock { $0[type] = m }
        return m
    }

    private func process(_ request: Envelope, handler: RPCRouter.RawHandler, caller: String?, layout: EnvelopeFrame,
                         attachment: Data?) async -> Data? {
        let span = telemetry.startProcessSpan(request, destination: serviceName, kind: .server)
        defer { span.end() }
        let context = RPCContext(envelope: request, logger: telemetry.logger, serviceContext: span.context, caller: caller,
                                 attachment: attachment)
        let started = ContinuousClock.now
        let metrics = metrics(for: request.type)
        // Everything logged while the request is handled, its outcome included, runs in the
        // request's span: log lines carry its trace_id and span_id (LogSetup's metadata provider).
        let frame: Data? = await ServiceContext.$current.withValue(span.context) { () async -> Data? in
            let frame: Data?
            do {
                let payload = try await handler(context)
                metrics.ok.increment()
                frame = payload.map {
                    Envelope(type: ReplyType.success, source: source, correlationId: request.id, payload: $0).encoded(as: layout)
                }
            } catch let error as ServiceError {
                telemetry.counter("chronir_rpc_requests_total", [("type", request.type), ("outcome", error.code.rawValue)]).increment()
                span.attributes["chronir.error.code"] = error.code.rawValue
                if error.code.httpStatus >= 500 {
                    span.setStatus(.init(code: .error))
                    context.logger.error("request failed", metadata: ["error": "\(error)"])
                } else {
                    context.logger.debug("request refused", metadata: ["error": "\(error)"])
                }
                frame = errorFrame(error, correlationId: request.id, layout: layout)
            } catch where translate?(error) != nil {
                let translated = translate!(error)!
                telemetry.counter("chronir_rpc_requests_total", [("type", request.type), ("outcome", translated.code.rawValue)]).increment()
                span.setStatus(.init(code: .error))
                context.logger.warning("request failed", metadata: ["error": "\(error)", "answered": "\(translated.code.rawValue)"])
                frame = errorFrame(translated, correlationId: request.id, layout: layout)
            } catch {
                telemetry.counter("chronir_rpc_requests_total", [("type", request.type), ("outcome", "CA023")]).increment()
                span.recordError(error)
                span.setStatus(.init(code: .error))
                context.logger.error("request failed with an unexpected error", metadata: ["error": "\(String(reflecting: error))"])
                frame = errorFrame(ServiceError(.internalError, "internal error while handling \(request.type)"), correlationId: request.id,
                                   layout: layout)
            }
            if telemetry.logger.logLevel <= .debug {   // the request's logger is built only then
                context.logger.debug("request handled", metadata: [
                    "ms": "\(Double(started.duration(to: .now).nanoseconds) / 1e6)",
                    "outcome": "\(frame == nil ? "no reply" : "answered")",
                ])
            }
            return frame
        }
        metrics.seconds.recordNanoseconds(started.duration(to: .now).nanoseconds)
        return frame
    }

    private func errorFrame(_ error: ServiceError, correlationId: String?, layout: EnvelopeFrame) -> Data {
        let payload = (try? JSONCoding.encode(error)) ?? Data("{\"code\":\"CA023\",\"message\":\"internal error\"}".utf8)
        return Envelope(type: ReplyType.error, source: source, correlationId: correlationId, payload: payload).encoded(as: layout)
    }

    private func reply(to identity: Data, error: ServiceError, correlationId: String?, layout: EnvelopeFrame) {
        socket.send([identity, errorFrame(error, correlationId: correlationId, layout: layout)])
    }

    private func reject(_ reason: String, _ detail: String) {
        telemetry.counter("chronir_messages_rejected_total", [("reason", reason), ("socket", "rpc-server")]).increment()
        telemetry.logger.warning("rejected a message", metadata: ["reason": "\(reason)", "detail": "\(detail)"])
    }
}
