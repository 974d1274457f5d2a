import OTel
import ServiceLifecycle
import Tracing

/// OTLP export through swift-otel, chosen when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set: spans go to the collector over OTLP/HTTP
/// (protobuf, or JSON with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) in batches
/// (`OTEL_BSP_SCHEDULE_DELAY` ms, default 5000). The tracer propagates W3C `traceparent`,
/// the same header the file tracer uses, so both kinds of process can share a trace.
/// `CHRONIR_TRACE_SAMPLE` becomes a parent-based trace-id-ratio sampler.
enum OTLPTracing {
    static func make(service: String, instance: String, environment: ServiceEnvironment) throws
        -> (tracer: any Tracer, service: any Service)? {
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
        var config = OTel.Configuration.default
        config.serviceName = environment.optional("OTEL_SERVICE_NAME") ?? service
        config.resourceAttributes["service.instance.id"] = instance
        config.metrics.enabled = false
        config.logs.enabled = false
        config.traces.exporter = .otlp
        config.traces.otlpExporter.endpoint = endpoint
        switch environment.optional("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? environment.optional("OTEL_EXPORTER_OTLP_PROTOCOL") ?? "http/protobuf" {
        case "http/protobuf": config.traces.otlpExporter.protocol = .httpProtobuf
        case "http/json": config.traces.otlpExporter.protocol = .httpJSON
        case let other:
            throw ServiceEnvironment.Invalid("OTEL_EXPORTER_OTLP_PROTOCOL=\"\(other)\": this build exports http/protobuf or http/json")
        }
        config.traces.batchSpanProcessor.scheduleDelay = .milliseconds(try environment.int("OTEL_BSP_SCHEDULE_DELAY", 5000, in: 1...600_000))
        let ratio = try environment.ratio("CHRONIR_TRACE_SAMPLE", 1)
        if ratio < 1, let sampler = OTel.Configuration.TracesConfiguration.SamplerConfiguration.parentBasedTraceIDRatio(ratio: ratio) {
            config.traces.sampler = sampler
        }
        let backend = try OTel.makeTracingBackend(configuration: config)
        return (backend.factory, backend.service)
    }
}
