import Foundation
import Hummingbird
import Logging
import Messaging
import Tracing

/// A server span per request (`HTTP <method> <route>`, W3C `traceparent` honoured when the
/// client sends one), request counters and latency timers, and the trace id in the
/// `traceresponse` header so a load generator can find the trace; one access line per request
/// at info (`logger` "access": method, route template, status, milliseconds, and the trace's
/// `trace_id`/`span_id` from the log setup's metadata provider).
struct TelemetryMiddleware<Context: RequestContext>: RouterMiddleware {
    let telemetry: Telemetry
    let access: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var parent = ServiceContext.topLevel
        var carrier: [String: String] = [:]
        if let tp = request.headers[.init("traceparent")!] { carrier["traceparent"] = tp }
        telemetry.tracer.extract(carrier, into: &parent, using: HeaderExtractor())
        let span = telemetry.tracer.startSpan("HTTP \(request.method)", context: parent, ofKind: .server)
        span.attributes["http.request.method"] = "\(request.method)"
        // No `url.path`: paths carry secrets (`/cal/<token>.ics`, `/v1/invitations/<code>`). The
        // route's template (`http.route`) says which endpoint it was.
        let started = ContinuousClock.now
        var response = try await ServiceContext.$current.withValue(span.context) {
            try await next(request, context)
        }
        let route = context.routeTemplate
        span.operationName = "HTTP \(request.method) \(route)"
        span.attributes["http.route"] = route
        let status = response.status.code
        span.attributes["http.response.status_code"] = status
        if status >= 500 { span.setStatus(.init(code: .error)) }
        var injected: [String: String] = [:]
        telemetry.tracer.inject(span.context, into: &injected, using: HeaderInjector())
        if let tp = injected["traceparent"] { response.headers[.init("traceresponse")!] = tp }
        let elapsed = started.duration(to: .now)
        ServiceContext.$current.withValue(span.context) {
            access.info("\(request.method) \(route) \(status)", metadata: [
                "method": "\(request.method)", "route": "\(route)", "status": "\(status)",
                "ms": "\(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)",
            ])
        }
        span.end()
        let dimensions = [("method", "\(request.method)"), ("route", route), ("status", String(status))]
        telemetry.counter("chronir_http_requests_total", dimensions).increment()
        telemetry.timer("chronir_http_request_seconds", [("method", "\(request.method)"), ("route", route)])
            .recordNanoseconds(started.duration(to: .now).nanoseconds)
        return response
    }
}
