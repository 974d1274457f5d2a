import Foundation
import Messaging
import Synchronization
import Tracing

/// The W3C trace identity of a span, carried in the `ServiceContext`.
public struct TraceIdentity: Sendable, Hashable {
    /// 32 lower-case hex digits.
    public var traceID: String
    /// 16 lower-case hex digits.
    public var spanID: String
    /// Whether the trace is sampled (exported).
    public var sampled: Bool

    /// The `traceparent` header value.
    public var traceparent: String { "00-\(traceID)-\(spanID)-\(sampled ? "01" : "00")" }

    /// Parses a `traceparent` header value (version 00). Read byte by byte: it runs for every
    /// message a service receives (a `split` and `Character` checks were 4–6 % of a service's
    /// CPU in a profile of a burst).
    public init?(traceparent: String) {
        var value = traceparent
        let parsed: (String, String, Bool)? = value.withUTF8 { b -> (String, String, Bool)? in
            // vv-<32 hex>-<16 hex>-ff
            guard b.count == 55, b[2] == 0x2D, b[35] == 0x2D, b[52] == 0x2D,
                  Self.hex(b[0]) != nil, Self.hex(b[1]) != nil,
                  let f1 = Self.hex(b[53]), let f2 = Self.hex(b[54]) else { return nil }
            var trace = [UInt8](repeating: 0, count: 32), span = [UInt8](repeating: 0, count: 16)
            var traceZero = true, spanZero = true
            for k in 0..<32 {
                guard let v = Self.hex(b[3 + k]) else { return nil }
                if v != 0 { traceZero = false }
                trace[k] = Self.lower(b[3 + k])
            }
            for k in 0..<16 {
                guard let v = Self.hex(b[36 + k]) else { return nil }
                if v != 0 { spanZero = false }
                span[k] = Self.lower(b[36 + k])
            }
            guard !traceZero, !spanZero else { return nil }
            return (String(decoding: trace, as: UTF8.self), String(decoding: span, as: UTF8.self), (f1 << 4 | f2) & 1 == 1)
        }
        guard let parsed else { return nil }
        traceID = parsed.0
        spanID = parsed.1
        sampled = parsed.2
    }

    private static func hex(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46: c - 0x41 + 10
        default: nil
        }
    }

    private static func lower(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x46 ? c + 0x20 : c }

    public init(traceID: String, spanID: String, sampled: Bool) {
        self.traceID = traceID
        self.spanID = spanID
        self.sampled = sampled
    }
}

enum TraceIdentityKey: ServiceContextKey {
    typealias Value = TraceIdentity
    static var nameOverride: String? { "chronir-trace" }
}

extension ServiceContext {
    /// The trace identity of the current span, if any.
    public var traceIdentity: TraceIdentity? {
        get { self[TraceIdentityKey.self] }
        set { self[TraceIdentityKey.self] = newValue }
    }
}

/// Receives finished spans.
public protocol SpanExporter: Sendable {
    func export(_ span: FinishedSpan)
}

/// A finished span as exported (one JSON line in a trace file).
public struct FinishedSpan: Codable, Sendable {
    public var traceId: String
    public var spanId: String
    public var parentSpanId: String?
    public var name: String
    public var kind: String
    public var service: String
    public var instance: String
    public var startUnixNano: UInt64
    public var endUnixNano: UInt64
    public var attributes: [String: String]
    public var status: String?
    public var links: [String]
    public var events: [String]
}

/// A tracer that follows W3C Trace Context (`traceparent`/`tracestate`) and hands finished
/// spans to an exporter. Without an exporter it still creates and propagates identities, so a
/// trace id flows through every message even when nothing is recorded.
public final class ChronirTracer: Tracer {
    public typealias Span = ChronirSpan

    let service: String
    let instance: String
    let exporter: (any SpanExporter)?
    let rootSampleRatio: Double

    /// `rootSampleRatio`: the share of new traces (no sampled parent) that are recorded
    /// (`CHRONIR_TRACE_SAMPLE`); a parent's decision is always followed.
    public init(service: String, instance: String, exporter: (any SpanExporter)?, rootSampleRatio: Double = 1) {
        self.service = service
        self.instance = instance
        self.exporter = exporter
        self.rootSampleRatio = rootSampleRatio
    }

    public func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> ChronirSpan {
        var context = context()
        let parent = context.traceIdentity
        let identity = TraceIdentity(
            traceID: parent?.traceID ?? Self.randomHex(bytes: 16),
            spanID: Self.randomHex(bytes: 8),
            sampled: parent?.sampled ?? context.sampleRoot ?? (rootSampleRatio >= 1 || Double.random(in: 0..<1) < rootSampleRatio)
        )
        context.traceIdentity = identity
        return ChronirSpan(operationName: operationName, kind: kind, context: context, parentSpanID: parent?.spanID,
                           start: instant().nanosecondsSinceEpoch, tracer: self,
                           recording: exporter != nil && identity.sampled)
    }

    public func forceFlush() {}

    public func extract<Carrier, Extract>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract: Extractor, Extract.Carrier == Carrier {
        guard let value = extractor.extract(key: "traceparent", from: carrier), let identity = TraceIdentity(traceparent: value) else { return }
        context.traceIdentity = identity
    }

    public func inject<Carrier, Inject>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject: Injector, Inject.Carrier == Carrier {
        guard let identity = context.traceIdentity else { return }
        injector.inject(identity.traceparent, forKey: "traceparent", into: &carrier)
    }

    static func randomHex(bytes: Int) -> String {
        var rng = FastRandom()
        var raw = [UInt8]()
        raw.reserveCapacity(bytes)
        var word: UInt64 = 0
        for k in 0..<bytes {
            if k % 8 == 0 { word = rng.next() }
            raw.append(UInt8(truncatingIfNeeded: word >> (UInt64(k % 8) * 8)))
        }
        // An all-zero id is invalid in W3C trace context.
        if raw.allSatisfy({ $0 == 0 }) { raw[raw.count - 1] = 1 }
        return Hex.lowercase(raw)
    }
}

/// A span of ``ChronirTracer``.
public final class ChronirSpan: Tracing.Span {
    private struct State {
        var name: String
        var attributes = SpanAttributes()
        var status: SpanStatus? = nil
        var links: [String] = []
        var events: [String] = []
        var ended = false
    }

    public let context: ServiceContext
    public let isRecording: Bool
    private let kind: SpanKind
    private let parentSpanID: String?
    private let start: UInt64
    private let tracer: ChronirTracer
    private let state: Mutex<State>

    init(operationName: String, kind: SpanKind, context: ServiceContext, parentSpanID: String?, start: UInt64,
         tracer: ChronirTracer, recording: Bool) {
        self.kind = kind
        self.context = context
        self.parentSpanID = parentSpanID
        self.start = start
        self.tracer = tracer
        self.isRecording = recording
        self.state = Mutex(State(name: operationName))
    }

    public var operationName: String {
        get { state.withLock { $0.name } }
        set { state.withLock { $0.name = newValue } }
    }

    public var attributes: SpanAttributes {
        get { state.withLock { $0.attributes } }
        set {
            guard isRecording else { return }
            state.withLock { $0.attributes = newValue }
        }
    }

    public func setStatus(_ status: SpanStatus) {
        guard isRecording else { return }
        state.withLock { $0.status = status }
    }

    public func addEvent(_ event: SpanEvent) {
        guard isRecording else { return }
        state.withLock { $0.events.append(event.name) }
    }

    public func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        guard isRecording else { return }
        state.withLock { $0.events.append("exception: \(error)") }
    }

    public func addLink(_ link: SpanLink) {
        guard isRecording, let identity = link.context.traceIdentity else { return }
        state.withLock { $0.links.append(identity.traceparent) }
    }

    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        let end = instant().nanosecondsSinceEpoch
        let snapshot = state.withLock { s -> State? in
            if s.ended { return nil }
            s.ended = true
            return s
        }
        guard isRecording, let s = snapshot, let exporter = tracer.exporter, let identity = context.traceIdentity else { return }
        var attributes: [String: String] = [:]
        s.attributes.forEach { key, value in attributes[key] = Self.text(value) }
        exporter.export(FinishedSpan(
            traceId: identity.traceID, spanId: identity.spanID, parentSpanId: parentSpanID, name: s.name,
            kind: "\(kind)", service: tracer.service, instance: tracer.instance, startUnixNano: start, endUnixNano: end,
            attributes: attributes, status: s.status.map { "\($0.code)" }, links: s.links, events: s.events
        ))
    }

    static func text(_ value: SpanAttribute) -> String {
        switch value {
        case .int32(let v): String(v)
        case .int64(let v): String(v)
        case .double(let v): String(v)
        case .bool(let v): String(v)
        case .string(let v): v
        case .stringConvertible(let v): v.description
        default: "\(value)"
        }
    }
}
