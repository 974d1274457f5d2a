import HTTPTypes
import Messaging
import NIOCore
import NIOHTTPTypes

/// How long a request body may take to arrive (`CHRONIR_HTTP_BODY_TIMEOUT`, 20 s, and
/// `CHRONIR_HTTP_BODY_MIN_RATE`, 500 bytes a second), as Apache's `mod_reqtimeout` does it: a
/// body must be complete within the base time, extended by a second for every `minRate` bytes
/// that arrived. A body trickled a byte at a time (which resets the idle timeout with every
/// byte) is cut after the base time; an honest slow upload keeps going as long as it sends at
/// least `minRate` bytes a second. A connection past its deadline is closed (its request gets no
/// answer: the client is not reading one in time either) and counted in
/// `chronir_gateway_body_timeouts_total`.
struct BodyDeadline: Sendable {
    /// The time every body gets (zero: no deadline).
    let base: Duration
    /// The bytes a second that extend the deadline by a second each.
    let minRate: Int
    /// The most any body may take, however fast it comes (`CHRONIR_HTTP_BODY_MAX_TIME`): a
    /// minimum rate alone has no ceiling, and a client keeping it up (or draining a refused
    /// body the server discards) would hold its connection for hours (issue 74).
    var ceiling: Duration = .seconds(300)
    let telemetry: Telemetry

    /// The deadline, after `started`, for a body of which `received` bytes have arrived.
    func deadline(started: NIODeadline, received: Int) -> NIODeadline {
        let extra = minRate > 0 ? TimeAmount.nanoseconds(Int64(received) * 1_000_000_000 / Int64(minRate)) : .zero
        return min(started + TimeAmount(base) + extra, started + TimeAmount(max(ceiling, base)))
    }

    /// The handlers for a new connection's pipeline: none when there is no deadline.
    func handlers() -> [any RemovableChannelHandler] {
        base > .zero ? [BodyDeadlineHandler(rule: self)] : []
    }
}

/// Watches each request's body against its ``BodyDeadline`` from the head to the end, and closes
/// the connection when the deadline passes first. It passes every part on unchanged.
final class BodyDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let rule: BodyDeadline
    /// When the body being read began (nil: no body is being read).
    private var started: NIODeadline?
    private var received = 0
    private var timer: Scheduled<Void>?

    init(rule: BodyDeadline) {
        self.rule = rule
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if Self.hasBody(head) {
                started = .now()
                received = 0
                arm(context)
            }
        case .body(let buffer):
            received += buffer.readableBytes
        case .end:
            disarm()
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    /// Whether a request with `head` sends a body: a non-zero `Content-Length` or chunked.
    static func hasBody(_ head: HTTPRequest) -> Bool {
        if let length = head.headerFields[.contentLength], let n = Int(length) { return n > 0 }
        return head.headerFields[.transferEncoding]?.lowercased().contains("chunked") == true
    }

    /// Schedules the check at the deadline for what has arrived so far; the check closes the
    /// connection, or schedules itself again at the deadline that more bytes earned.
    private func arm(_ context: ChannelHandlerContext) {
        guard let started else { return }
        let at = rule.deadline(started: started, received: received)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: at) {
            let (handler, context) = loopBound.value
            handler.check(context)
        }
    }

    private func check(_ context: ChannelHandlerContext) {
        timer = nil
        guard let started else { return }
        if rule.deadline(started: started, received: received) > .now() {
            arm(context)
            return
        }
        self.started = nil
        rule.telemetry.counter("chronir_gateway_body_timeouts_total").increment()
        context.close(promise: nil)
    }

    private func disarm() {
        started = nil
        timer?.cancel()
        timer = nil
    }
}

@available(*, unavailable)
extension BodyDeadlineHandler: Sendable {}
