import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Tracing
import ZMQ

/// Answers requests on a bound ROUTER socket.
///
/// Each request runs in its own child task (at most `maxConcurrent` at once; beyond that the
/// server stops reading and libzmq's queue pushes back). Bad input never stops the server:
/// oversized frames get `CA024`, undecodable envelopes `CA020`, unknown types `CA020` naming
/// the type, each logged and counted in `chronir_messages_rejected_total{reason}`. Requests
/// whose deadline has passed are dropped unanswered (nobody waits for them).
public final class RPCServer: Service, Sendable {
    /// The name of the serving service (reply `source`, logs, spans).
    public let serviceName: String
    /// The bound endpoints (wildcard ports resolved).
    public var endpoints: [String] { socket.boundEndpoints }

    private let socket: SocketActor
    private let router: RPCRouter
    private let source: String
    private let telemetry: Telemetry
    private let limiter: AsyncSemaphore
    private let idempotency = IdempotencyCache()
    private let maxFrameBytes: Int

    /// Binds a ROUTER to `binds`.
    public init(
        context: ZMQContext, serviceName: String, instance: String, binds: [String], router: RPCRouter,
        telemetry: Telemetry, maxFrameBytes: Int = 1 << 20, maxConcurrent: Int = 1024
    ) throws {
        self.serviceName = serviceName
        self.source = "\(serviceName)/\(instance)"
        self.router = router
        self.telemetry = telemetry
        self.maxFrameBytes = maxFrameBytes
        self.limiter = AsyncSemaphore(maxConcurrent)
        var options = SocketOptions(type: .router)
        options.binds = binds
        options.maxFrameBytes = maxFrameBytes
        options.lingerMilliseconds = 500
        self.socket = try SocketActor(context: context, options: options, name: "rpc:\(serviceName)")
    }

    /// Serves until graceful shutdown: then stops taking requests, finishes those in flight,
    /// and closes the socket.
    public func run() async throws {
        telemetry.logger.info("serving requests", metadata: ["endpoints": "\(endpoints)", "types": "\(router.types.count)"])
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                for await message in socket.messages {
                    await limiter.acquire()
                    group.addTask {
                        defer { self.limiter.release() }
                        await self.handle(message)
                    }
                }
            }
        } onGracefulShutdown: {
            self.socket.finishMessages()
        }
        await socket.close()
    }

    /// Stops serving immediately (tests that simulate a crashed service).
    public func close() async {
        socket.finishMessages()
        await socket.close()
    }

    // MARK: - Handling one message

    private func handle(_ message: ReceivedMessage) async {
        guard message.frames.count >= 2 else {
            reject("malformed", "a request needs a routing id and one body frame")
            return
        }
        let identity = message.frames[0]
        if let size = message.oversizedBytes {
            reject("oversized", "request of \(size) bytes exceeds the \(maxFrameBytes)-byte limit")
            reply(to: identity, error: ServiceError(.payloadTooLarge, "message of \(size) bytes exceeds the \(maxFrameBytes)-byte limit"), correlationId: nil)
            return
        }
        let request: Envelope
        do {
            request = try Envelope.decode(message.frames[message.frames.count - 1])
        } catch {
            reject("malformed", "\(error)")
            reply(to: identity, error: ServiceError(.messageInvalid, "malformed envelope: \(error)"), correlationId: nil)
            return
        }
        if let deadline = request.headers[EnvelopeHeader.deadline].flatMap(Int64.init),
           deadline < Int64(Date().timeIntervalSince1970 * 1000) {
            telemetry.counter("chronir_messages_rejected_total", [("reason", "expired"), ("socket", "rpc-server")]).increment()
            telemetry.logger.debug("dropped a request past its deadline", metadata: ["type": "\(request.type)", "id": "\(request.id)"])
            return
        }
        guard let handler = router.handlers[request.type] else {
            reject("unknown_type", "unknown message type \"\(request.type)\"")
            reply(to: identity, error: ServiceError(.messageInvalid, "unknown message type \"\(request.type)\""), correlationId: request.id)
            return
        }
        let key = request.headers[EnvelopeHeader.idempotencyKey].map { "\(request.actor ?? "-")|\(request.type)|\($0)" }
        if let key, case .replay(let cached) = await idempotency.claim(key) {
            telemetry.counter("chronir_rpc_idempotent_replays_total", [("type", request.type)]).increment()
            if let cached, var replay = try? Envelope.decode(cached) {
                replay.correlationId = request.id
                socket.send([identity, replay.encoded()])
            }
            return
        }
        let frame = await process(request, handler: handler)
        if let key { idempotency.finish(key, reply: frame) }
        if let frame { socket.send([identity, frame]) }
    }

    private func process(_ request: Envelope, handler: RouterHandler) async -> Data? {
        let span = telemetry.startProcessSpan(request, destination: serviceName, kind: .server)
        defer { span.end() }
        var logger = telemetry.logger
        logger[metadataKey: "type"] = "\(request.type)"
        logger[metadataKey: "request"] = "\(request.id)"
        if let actor = request.actor { logger[metadataKey: "actor"] = "\(actor)" }
        let context = RPCContext(envelope: request, logger: logger, serviceContext: span.context)
        let started = ContinuousClock.now
        let outcome: String
        let frame: Data?
        do {
            let payload = try await ServiceContext.$current.withValue(span.context) { try await handler(context) }
            outcome = "ok"
            frame = payload.map {
                Envelope(type: ReplyType.success, source: source, correlationId: request.id, payload: $0).encoded()
            }
        } catch let error as ServiceError {
            outcome = error.code.rawValue
            span.attributes["chronir.error.code"] = error.code.rawValue
            if error.code.httpStatus >= 500 {
                span.setStatus(.init(code: .error))
                logger.error("request failed", metadata: ["error": "\(error)"])
            } else {
                logger.debug("request refused", metadata: ["error": "\(error)"])
            }
            frame = errorFrame(error, correlationId: request.id)
        } catch {
            outcome = "CA023"
            span.recordError(error)
            span.setStatus(.init(code: .error))
            logger.error("request failed with an unexpected error", metadata: ["error": "\(String(reflecting: error))"])
            frame = errorFrame(ServiceError(.internalError, "internal error while handling \(request.type)"), correlationId: request.id)
        }
        telemetry.counter("chronir_rpc_requests_total", [("type", request.type), ("outcome", outcome)]).increment()
        telemetry.timer("chronir_rpc_handle_seconds", [("type", request.type)]).recordNanoseconds(started.duration(to: .now).nanoseconds)
        return frame
    }

    typealias RouterHandler = RPCRouter.RawHandler

    private func errorFrame(_ error: ServiceError, correlationId: String?) -> Data {
        let payload = (try? JSONCoding.encode(error)) ?? Data("{\"code\":\"CA023\",\"message\":\"internal error\"}".utf8)
        return Envelope(type: ReplyType.error, source: source, correlationId: correlationId, payload: payload).encoded()
    }

    private func reply(to identity: Data, error: ServiceError, correlationId: String?) {
        socket.send([identity, errorFrame(error, correlationId: correlationId)])
    }

    private func reject(_ reason: String, _ detail: String) {
        telemetry.counter("chronir_messages_rejected_total", [("reason", reason), ("socket", "rpc-server")]).increment()
        telemetry.logger.warning("rejected a message", metadata: ["reason": "\(reason)", "detail": "\(detail)"])
    }
}
