import AsyncHTTPClient
import DequeModule
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// Sends finished spans to an OpenTelemetry collector (or Jaeger v2) over OTLP/HTTP with JSON
/// bodies, when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set.
/// It is one exporter of ``ChronirTracer`` beside the span file, so both hold the same spans
/// with the same ids as the log lines, and `chronirctl trace` works where a collector runs too.
///
/// Batches go out every `OTEL_BSP_SCHEDULE_DELAY` ms (default 5000) or at 512 spans; at most
/// 10 000 wait (the oldest are dropped and counted when the collector is slow or gone). A
/// failed batch is logged once a minute at most and dropped: tracing never holds up the work.
/// At shutdown what is left is sent for at most 3 s. Requests go through `HTTPClient.shared`
/// (nothing to shut down, so a process that fails to start, or never runs the exporter, is fine).
public final class OTLPSpanExporter: SpanExporter, Service {
    /// The URL spans are posted to (`…/v1/traces`).
    public let endpoint: String
    private let resource: [String: String]
    private let delay: Duration
    private let logger: Logger
    private let state = Mutex(State())
    private let maxBatch = 512
    private let maxQueued = 10_000

    private struct State {
        var queue = Deque<FinishedSpan>()
        var dropped = 0
        var sent = 0
        var failed = 0
        var lastFailureLog: ContinuousClock.Instant?
    }

    /// The exporter the environment asks for, or nil when no OTLP endpoint is set.
    public static func make(service: String, instance: String, environment: ServiceEnvironment, logger: Logger) throws
        -> OTLPSpanExporter? {
        let endpoint: String
        if let full = environment.optional("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            endpoint = full
        } else if let base = environment.optional("OTEL_EXPORTER_OTLP_ENDPOINT") {
            endpoint = base.hasSuffix("/") ? base + "v1/traces" : base + "/v1/traces"
        } else {
            return nil
        }
        guard endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://") else {
            throw ServiceEnvironment.Invalid("OTEL_EXPORTER_OTLP_ENDPOINT=\"\(endpoint)\" must be an http:// or https:// URL")
        }
        let proto = environment.optional("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? environment.optional("OTEL_EXPORTER_OTLP_PROTOCOL") ?? "http/json"
        guard proto == "http/json" else {
            throw ServiceEnvironment.Invalid("OTEL_EXPORTER_OTLP_PROTOCOL=\"\(proto)\": this build exports http/json (OTLP/HTTP with JSON bodies, which collectors and Jaeger v2 take on the same port)")
        }
        let delay = try environment.int("OTEL_BSP_SCHEDULE_DELAY", 5000, in: 1...600_000)
        return OTLPSpanExporter(endpoint: endpoint, serviceName: environment.optional("OTEL_SERVICE_NAME") ?? service,
                                instance: instance, delay: .milliseconds(delay), logger: logger)
    }

    public init(endpoint: String, serviceName: String, instance: String, delay: Duration, logger: Logger) {
        self.endpoint = endpoint
        self.resource = ["service.name": serviceName, "service.instance.id": instance]
        self.delay = delay
        self.logger = logger
    }

    public func export(_ span: FinishedSpan) {
        state.withLock { s in
            if s.queue.count >= maxQueued {
                s.queue.removeFirst()
                s.dropped += 1
            }
            s.queue.append(span)
        }
    }

    /// Spans sent, dropped for want of room, and lost in failed batches, so far.
    public var counts: (sent: Int, dropped: Int, failed: Int) { state.withLock { ($0.sent, $0.dropped, $0.failed) } }

    /// Sends a batch every `delay` (sooner when one is full) until graceful shutdown, then what is left.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            var waited = Duration.zero
            let step = min(self.delay, .milliseconds(100))
            while !Task.isCancelled {
                try? await Task.sleep(for: step)
                waited += step
                let full = self.state.withLock { $0.queue.count >= self.maxBatch }
                guard full || waited >= self.delay else { continue }
                waited = .zero
                await self.flush()
            }
        }
        await flush(for: .seconds(3))
    }

    /// Sends everything queued now, in batches of at most 512 spans; with `limit`, for at most that
    /// long (what is left then is dropped).
    public func flush(for limit: Duration? = nil) async {
        let deadline = limit.map { ContinuousClock.now + $0 }
        while deadline.map({ ContinuousClock.now < $0 }) ?? true {
            let batch = state.withLock { s -> [FinishedSpan] in
                let n = min(s.queue.count, maxBatch)
                let b = Array(s.queue.prefix(n))
                s.queue.removeFirst(n)
                return b
            }
            guard !batch.isEmpty else { return }
            let left = deadline.map { ContinuousClock.now.duration(to: $0) } ?? .seconds(10)
            await send(batch, timeout: max(.seconds(1), min(left, .seconds(10))))
        }
    }

    private func send(_ batch: [FinishedSpan], timeout: Duration = .seconds(10)) async {
        var request = HTTPClientRequest(url: endpoint)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        do {
            request.body = .bytes(ByteBuffer(data: try OTLPJSON.body(batch, resource: resource)))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(timeout.components.seconds))
            _ = try? await response.body.collect(upTo: 64 * 1024)
            guard (200..<300).contains(Int(response.status.code)) else {
                throw OTLPExportFailed("the collector answered \(response.status.code)")
            }
            state.withLock { $0.sent += batch.count }
        } catch {
            let log = state.withLock { s -> Bool in
                s.failed += batch.count
                let now = ContinuousClock.now
                guard s.lastFailureLog.map({ $0.duration(to: now) >= .seconds(60) }) ?? true else { return false }
                s.lastFailureLog = now
                return true
            }
            if log {
                logger.warning("spans not exported over OTLP; dropped (logged once a minute)",
                               metadata: ["endpoint": "\(endpoint)", "spans": "\(batch.count)", "error": "\(error)"])
            }
        }
    }
}

struct OTLPExportFailed: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Several exporters as one (the span file and OTLP).
public struct SpanExporters: SpanExporter {
    let all: [any SpanExporter]

    public init(_ all: [any SpanExporter]) { self.all = all }

    public func export(_ span: FinishedSpan) {
        for e in all { e.export(span) }
    }
}
