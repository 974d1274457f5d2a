import CoreMetrics
import Foundation
import Logging
import Synchronization
import Tracing

/// What messaging code reports through: a logger, a metrics factory and a tracer, all
/// passed in by the service builder (never global).
public struct Telemetry: Sendable {
    /// The logger to derive from.
    public var logger: Logger
    /// Where counters and timers go (Prometheus in services, a no-op in some tests).
    public var metrics: any MetricsFactory
    /// Where spans go.
    public var tracer: any Tracer
    /// Cache of metric handles (creating one per event would be slow).
    let cache: MetricCache

    public init(logger: Logger, metrics: any MetricsFactory, tracer: any Tracer) {
        self.logger = logger
        self.metrics = metrics
        self.tracer = tracer
        self.cache = MetricCache()
    }

    /// A counter with the given label and dimensions, created once.
    public func counter(_ label: String, _ dimensions: [(String, String)] = []) -> Counter {
        cache.counter(label, dimensions, factory: metrics)
    }

    /// A timer (histogram of durations) with the given label and dimensions, created once.
    public func timer(_ label: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Timer {
        cache.timer(label, dimensions, factory: metrics)
    }

    /// A gauge with the given label and dimensions, created once.
    public func gauge(_ label: String, _ dimensions: [(String, String)] = []) -> Gauge {
        cache.gauge(label, dimensions, factory: metrics)
    }

    /// Telemetry that records nothing (tools and tests that do not look at it).
    public static func discarding(logger: Logger = Logger(label: "chronir", factory: { _ in SwiftLogNoOpLogHandler() })) -> Telemetry {
        Telemetry(logger: logger, metrics: NOOPMetricsHandler.instance, tracer: NoOpTracer())
    }
}

final class MetricCache: Sendable {
    private struct Key: Hashable {
        var label: String
        var dimensions: [String]
    }

    private let counters = Mutex<[Key: Counter]>([:])
    private let timers = Mutex<[Key: CoreMetrics.Timer]>([:])
    private let gauges = Mutex<[Key: Gauge]>([:])

    private func key(_ label: String, _ dimensions: [(String, String)]) -> Key {
        Key(label: label, dimensions: dimensions.flatMap { [$0.0, $0.1] })
    }

    func counter(_ label: String, _ dimensions: [(String, String)], factory: any MetricsFactory) -> Counter {
        let k = key(label, dimensions)
        return counters.withLock { map in
            if let c = map[k] { return c }
            let c = Counter(label: label, dimensions: dimensions, factory: factory)
            map[k] = c
            return c
        }
    }

    func timer(_ label: String, _ dimensions: [(String, String)], factory: any MetricsFactory) -> CoreMetrics.Timer {
        let k = key(label, dimensions)
        return timers.withLock { map in
            if let t = map[k] { return t }
            let t = CoreMetrics.Timer(label: label, dimensions: dimensions, factory: factory)
            map[k] = t
            return t
        }
    }

    func gauge(_ label: String, _ dimensions: [(String, String)], factory: any MetricsFactory) -> Gauge {
        let k = key(label, dimensions)
        return gauges.withLock { map in
            if let g = map[k] { return g }
            let g = Gauge(label: label, dimensions: dimensions, factory: factory)
            map[k] = g
            return g
        }
    }
}

/// Injects trace context into envelope headers.
public struct HeaderInjector: Injector {
    public init() {}
    public func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }
}

/// Extracts trace context from envelope headers.
public struct HeaderExtractor: Extractor {
    public init() {}
    public func extract(key: String, from carrier: [String: String]) -> String? {
        carrier[key]
    }
}

enum SampleRootKey: ServiceContextKey {
    typealias Value = Bool
    static var nameOverride: String? { "chronir-sample-root" }
}

extension ServiceContext {
    /// Asks the tracer to record (or not) a new root span whatever its sampling ratio says: a
    /// fire linked to a sampled creation is sampled too.
    public var sampleRoot: Bool? {
        get { self[SampleRootKey.self] }
        set { self[SampleRootKey.self] = newValue }
    }
}

/// Span attribute names of the OpenTelemetry messaging conventions.
public enum MessagingAttribute {
    public static let system = "messaging.system"
    public static let operationType = "messaging.operation.type"
    public static let destination = "messaging.destination.name"
    public static let messageID = "messaging.message.id"
    public static let conversationID = "messaging.message.conversation_id"
    public static let messageType = "messaging.message.type"
    public static let bodySize = "messaging.message.body.size"
}

extension Telemetry {
    /// Starts a span for a message being sent and writes its context into `headers`.
    public func startPublishSpan(type: String, destination: String, id: String, context: ServiceContext,
                          kind: SpanKind, headers: inout [String: String]) -> any Span {
        let span = tracer.startSpan("\(type) publish", context: context, ofKind: kind)
        tracer.inject(span.context, into: &headers, using: HeaderInjector())
        guard span.isRecording else { return span }
        span.attributes[MessagingAttribute.system] = "zeromq"
        span.attributes[MessagingAttribute.operationType] = "publish"
        span.attributes[MessagingAttribute.destination] = destination
        span.attributes[MessagingAttribute.messageID] = id
        span.attributes[MessagingAttribute.messageType] = type
        return span
    }

    /// Starts the root span of work an earlier trace caused later (a fire caused by a creation):
    /// a new trace with a link to `traceparent`, recorded when that one was.
    public func startLinkedSpan(_ name: String, linkedTo traceparent: String?, kind: SpanKind = .internal) -> any Span {
        var context = ServiceContext.topLevel
        var linked = ServiceContext.topLevel
        if let traceparent {
            tracer.extract([EnvelopeHeader.traceparent: traceparent], into: &linked, using: HeaderExtractor())
            context.sampleRoot = traceparent.hasSuffix("-01")
        }
        let span = tracer.startSpan(name, context: context, ofKind: kind)
        if traceparent != nil { span.addLink(SpanLink(context: linked, attributes: [:])) }
        return span
    }

    /// The trace context a received envelope carries.
    public func extractContext(from envelope: Envelope) -> ServiceContext {
        var context = ServiceContext.topLevel
        tracer.extract(envelope.headers, into: &context, using: HeaderExtractor())
        return context
    }

    /// Starts a span for a message being handled, as a child of the sender's span.
    public func startProcessSpan(_ envelope: Envelope, destination: String, kind: SpanKind) -> any Span {
        let span = tracer.startSpan("\(envelope.type) process", context: extractContext(from: envelope), ofKind: kind)
        guard span.isRecording else { return span }
        span.attributes[MessagingAttribute.system] = "zeromq"
        span.attributes[MessagingAttribute.operationType] = "process"
        span.attributes[MessagingAttribute.destination] = destination
        span.attributes[MessagingAttribute.messageID] = envelope.id
        span.attributes[MessagingAttribute.messageType] = envelope.type
        if let c = envelope.correlationId { span.attributes[MessagingAttribute.conversationID] = c }
        return span
    }
}
