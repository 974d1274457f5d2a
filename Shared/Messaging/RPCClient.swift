import CoreMetrics
import DequeModule
import Foundation
import Logging
import Synchronization
import Tracing
import ZMQ

/// Sends requests to one service over a DEALER socket and matches replies by correlation id.
///
/// Many requests may be in flight at once; each has a deadline (sent along in the envelope so
/// the server can drop requests nobody waits for any more). Replies are matched on the socket
/// thread and resume the waiting task directly. Requests with an idempotency key may be
/// retried after a missed deadline; others never are.
public final class RPCClient: Sendable {
    /// The service this client talks to (for errors, logs and spans).
    public let target: String
    private let source: String
    private let telemetry: Telemetry
    private let defaultTimeout: Duration
    /// What a call made inside a database transaction meets (``TransactionScope``).
    private let insideTransaction: TransactionCallPolicy
    private let maxFrameBytes: Int
    /// The largest frame this client sends or takes.
    public var frameLimit: Int { maxFrameBytes }
    private let layout: EnvelopeFrame
    private let state = Mutex(State())
    private let clock = ContinuousClock()
    nonisolated(unsafe) private var socketStorage: SocketActor!

    private let timers = Mutex<[String: CoreMetrics.Timer]>([:])

    private struct State {
        var pending: [String: CheckedContinuation<Envelope, any Error>] = [:]
        /// Deadlines per timeout: requests with the same timeout expire in the order they were
        /// sent, so each queue stays sorted and an insert is an append (a heap of every request
        /// was a log-n insert of a string-holding element per call).
        var deadlines: [Duration: Deque<Deadline>] = [:]
        var closed = false
    }

    private struct Deadline {
        var at: ContinuousClock.Instant
        var id: String
    }

    /// Connects a DEALER to `endpoints` (a DEALER spreads requests over all of them).
    /// `frame`: the layout requests are sent in (servers answer in the same one); JSON for
    /// servers older than the binary layout. `callerSends`: a request goes out on the calling
    /// task's thread when the socket's thread is idle (``SocketOptions/callerSends``).
    /// `insideTransaction`: what a call made while the caller holds a database transaction meets.
    public init(
        context: ZMQContext, target: String, endpoints: [String], source: String, telemetry: Telemetry,
        defaultTimeout: Duration = .seconds(5), maxFrameBytes: Int = 1 << 20, frame: EnvelopeFrame = .binary,
        callerSends: Bool = true, insideTransaction: TransactionCallPolicy = .warn
    ) throws {
        self.insideTransaction = insideTransaction
        self.layout = frame
        self.target = target
        self.source = source
        self.telemetry = telemetry
        self.defaultTimeout = defaultTimeout
        self.maxFrameBytes = maxFrameBytes
        var options = SocketOptions(type: .dealer)
        options.connects = endpoints
        options.curve = .client(server: target)
        options.maxFrameBytes = maxFrameBytes
        options.lingerMilliseconds = 0
        // Several replicas: requests go only to connected ones, so a killed one drops out at
        // once. One endpoint (possibly a DNS name over replicas): requests queue for it while
        // it reconnects. (ZMQ_IMMEDIATE on single-name endpoints stalled a whole compose stack
        // for ~45 s at start.)
        options.immediate = endpoints.count > 1
        // A request is independent of the others: the calling task sends it itself when the
        // socket thread is idle (no queue hand-off, no thread wake-up per request).
        options.callerSends = callerSends
        let callbacks = SocketActor.Callbacks(
            tickInterval: .milliseconds(5),
            onTick: { [weak self] in self?.expireDeadlines() ?? false },
            onMessage: { [weak self] message in self?.receive(message) }
        )
        socketStorage = try SocketActor(context: context, options: options, name: "rpc->\(target)", callbacks: callbacks)
    }

    private var socket: SocketActor { socketStorage }

    /// Calls `method` and decodes its response. Throws the service's ``ServiceError`` when it
    /// answered with one, `CA021` when the deadline passed, `CA022` when the client is closed.
    public func call<M: RPCMethod>(
        _ method: M.Type, _ request: M.Request, actor: String? = nil, headers: [String: String] = [:],
        timeout: Duration? = nil, idempotencyKey: String? = nil, retries: Int = 0
    ) async throws -> M.Response {
        let payload = try JSONCoding.encode(request)
        let reply = try await callRaw(type: M.type, payload: payload, actor: actor, headers: headers, timeout: timeout,
                                      idempotencyKey: idempotencyKey, retries: retries)
        do {
            return try JSONCoding.decoder().decode(M.Response.self, from: reply.payload)
        } catch {
            telemetry.logger.error("malformed reply", metadata: ["type": "\(M.type)", "target": "\(target)", "error": "\(error)"])
            throw ServiceError(.internalError, "\(target) answered \(M.type) with a malformed reply")
        }
    }

    /// Sends a request with a raw JSON payload and returns the reply envelope (a success;
    /// an error reply is thrown as ``ServiceError``). `attachment`: raw bytes sent as a frame
    /// of their own after the envelope (``EnvelopeHeader/attachment``; the handler reads them
    /// from ``RPCContext/attachment``), each frame within the message limit.
    public func callRaw(
        type: String, payload: Data, actor: String? = nil, headers extra: [String: String] = [:], timeout: Duration? = nil,
        idempotencyKey: String? = nil, retries: Int = 0, attachment: Data? = nil
    ) async throws -> Envelope {
        if let holder = TransactionScope.holder {
            switch insideTransaction {
            case .refuse:
                telemetry.logger.error("a call to another service inside a database transaction refused (CHRONIR_CALLS_IN_TRANSACTIONS=refuse)",
                                       metadata: ["type": "\(type)", "target": "\(target)"])
                throw ServiceError(.internalError, "\(type) to \(target) was called inside \(holder); read what it needs before the transaction")
            case .warn:
                telemetry.logger.warning("a call to another service inside a database transaction holds its connection and row locks until the answer",
                                         metadata: ["type": "\(type)", "target": "\(target)"])
            }
        }
        let timeout = timeout ?? defaultTimeout
        let id = UUIDv7.string()
        var headers = extra
        if let idempotencyKey { headers[EnvelopeHeader.idempotencyKey] = idempotencyKey }
        if let attachment {
            guard attachment.count <= maxFrameBytes else {
                throw ServiceError(.payloadTooLarge, "attachment of \(attachment.count) bytes exceeds the \(maxFrameBytes)-byte message limit")
            }
            headers[EnvelopeHeader.attachment] = String(attachment.count)
        }
        let attempts = idempotencyKey == nil ? 1 : 1 + max(0, retries)
        let wallDeadline = Date().addingTimeInterval(Double(timeout.components.seconds) * Double(attempts)
            + Double(timeout.components.attoseconds) * 1e-18 * Double(attempts))
        headers[EnvelopeHeader.deadline] = String(Int64(wallDeadline.timeIntervalSince1970 * 1000))
        let span = telemetry.startPublishSpan(type: type, destination: target, id: id,
                                              context: ServiceContext.current ?? .topLevel, kind: .client, headers: &headers)
        defer { span.end() }
        let envelope = Envelope(id: id, type: type, source: source, actor: actor, headers: headers, payload: payload)
        let frame = envelope.encoded(as: layout)
        guard frame.count <= maxFrameBytes else {
            throw ServiceError(.payloadTooLarge, "request of \(frame.count) bytes exceeds the \(maxFrameBytes)-byte message limit")
        }
        let started = clock.now
        var lastError: (any Error)? = nil
        for attempt in 0..<attempts {
            do {
                let reply = try await exchange(id: id, frames: attachment.map { [frame, $0] } ?? [frame], timeout: timeout)
                timer(type).recordNanoseconds(started.duration(to: clock.now).nanoseconds)
                if reply.type == ReplyType.error {
                    let error = (try? JSONCoding.decoder().decode(ServiceError.self, from: reply.payload))
                        ?? ServiceError(.internalError, "\(target) answered \(type) with an unreadable error")
                    span.attributes["chronir.error.code"] = error.code.rawValue
                    if error.code.httpStatus >= 500 { span.setStatus(.init(code: .error)) }
                    throw error
                }
                return reply
            } catch let error as ServiceError where error.code == .deadlineExceeded && attempt + 1 < attempts {
                lastError = error
                telemetry.counter("chronir_rpc_client_retries_total", [("type", type)]).increment()
                continue
            } catch {
                if let e = error as? ServiceError, e.code == .deadlineExceeded {
                    telemetry.counter("chronir_rpc_client_timeouts_total", [("type", type)]).increment()
                    span.setStatus(.init(code: .error))
                }
                throw error
            }
        }
        throw lastError ?? ServiceError(.deadlineExceeded, "\(target) did not answer \(type)")
    }

    /// Sends a message that expects no reply (e.g. `events.push`).
    public func sendOneWay(type: String, payload: Data, actor: String? = nil) throws {
        var headers: [String: String] = [:]
        let id = UUIDv7.string()
        let span = telemetry.startPublishSpan(type: type, destination: target, id: id,
                                              context: ServiceContext.current ?? .topLevel, kind: .producer, headers: &headers)
        defer { span.end() }
        let frame = Envelope(id: id, type: type, source: source, actor: actor, headers: headers, payload: payload).encoded(as: layout)
        guard frame.count <= maxFrameBytes else {
            throw ServiceError(.payloadTooLarge, "message of \(frame.count) bytes exceeds the \(maxFrameBytes)-byte limit")
        }
        socket.send([frame])
    }

    /// Requests waiting for a reply.
    public var inFlight: Int { state.withLock { $0.pending.count } }

    /// Fails every waiting request with `CA022` and closes the socket.
    public func close() async {
        let waiting = state.withLock { s -> [CheckedContinuation<Envelope, any Error>] in
            s.closed = true
            let w = Array(s.pending.values)
            s.pending.removeAll()
            return w
        }
        for c in waiting { c.resume(throwing: ServiceError(.serviceUnavailable, "client to \(target) closed")) }
        await socket.close()
    }

    // MARK: - Internals

    /// The latency timer of `type`, looked up by the type alone.
    private func timer(_ type: String) -> CoreMetrics.Timer {
        if let t = timers.withLock({ $0[type] }) { return t }
        let t = telemetry.timer("chronir_rpc_client_seconds", [("type", type)])
        timers.withLock { $0[type] = t }
        return t
    }

    private func exchange(id: String, frames: [Data], timeout: Duration) async throws -> Envelope {
        let deadline = clock.now + timeout
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Envelope, any Error>) in
                let closed = state.withLock { s -> Bool in
                    if s.closed { return true }
                    s.pending[id] = c
                    s.deadlines[timeout, default: []].append(Deadline(at: deadline, id: id))
                    return false
                }
                if closed {
                    c.resume(throwing: ServiceError(.serviceUnavailable, "client to \(target) closed"))
                    return
                }
                if Task.isCancelled {
                    fail(id, CancellationError())
                    return
                }
                socket.send(frames)
            }
        } onCancel: {
            fail(id, CancellationError())
        }
    }

    private func fail(_ id: String, _ error: any Error) {
        let c = state.withLock { $0.pending.removeValue(forKey: id) }
        c?.resume(throwing: error)
    }

    private func receive(_ message: ReceivedMessage) {
        guard message.oversizedBytes == nil, let body = message.frames.last else {
            telemetry.counter("chronir_messages_rejected_total", [("reason", "oversized"), ("socket", "rpc-client")]).increment()
            telemetry.logger.warning("dropped an oversized reply", metadata: ["target": "\(target)", "bytes": "\(message.oversizedBytes ?? 0)"])
            return
        }
        let reply: Envelope
        do {
            reply = try Envelope.decode(body)
        } catch {
            telemetry.counter("chronir_messages_rejected_total", [("reason", "malformed"), ("socket", "rpc-client")]).increment()
            telemetry.logger.warning("dropped a malformed reply", metadata: ["target": "\(target)", "error": "\(error)"])
            return
        }
        guard let correlationId = reply.correlationId else {
            telemetry.counter("chronir_messages_rejected_total", [("reason", "uncorrelated"), ("socket", "rpc-client")]).increment()
            if reply.type == ReplyType.error, let e = try? reply.decodePayload(ServiceError.self) {
                telemetry.logger.warning("\(target) rejected a request", metadata: ["error": "\(e)"])
            }
            return
        }
        let c = state.withLock { $0.pending.removeValue(forKey: correlationId) }
        guard let c else {
            // The waiter gave up (deadline, cancellation) or a retry was already answered.
            telemetry.counter("chronir_rpc_client_late_replies_total").increment()
            return
        }
        c.resume(returning: reply)
    }

    /// Fails requests past their deadline; returns whether any request still waits.
    private func expireDeadlines() -> Bool {
        let now = clock.now
        let (expired, waiting) = state.withLock { s -> ([(String, CheckedContinuation<Envelope, any Error>)], Bool) in
            var out: [(String, CheckedContinuation<Envelope, any Error>)] = []
            for timeout in Array(s.deadlines.keys) {
                while let first = s.deadlines[timeout]?.first, first.at <= now {
                    s.deadlines[timeout]!.removeFirst()
                    if let c = s.pending.removeValue(forKey: first.id) { out.append((first.id, c)) }
                }
            }
            if s.pending.isEmpty { s.deadlines.removeAll() }
            return (out, !s.pending.isEmpty)
        }
        for (_, c) in expired {
            c.resume(throwing: ServiceError(.deadlineExceeded, "\(target) did not answer in time"))
        }
        return waiting
    }
}

extension Duration {
    /// The duration in whole nanoseconds.
    public var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
