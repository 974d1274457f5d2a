import Foundation

/// The OTLP/JSON encoding of finished spans (`ExportTraceServiceRequest`, as
/// opentelemetry-proto's JSON mapping writes it: ids in lower-case hex, 64-bit times as decimal
/// strings, enums as numbers).
enum OTLPJSON {
    /// The request body for `spans`, all of one process (`resource`: `service.name`, `service.instance.id`).
    static func body(_ spans: [FinishedSpan], resource: [String: String]) throws -> Data {
        let request: [String: Any] = [
            "resourceSpans": [[
                "resource": ["attributes": attributes(resource)],
                "scopeSpans": [[
                    "scope": ["name": "chronir"],
                    "spans": spans.map(span),
                ]],
            ]],
        ]
        return try JSONSerialization.data(withJSONObject: request, options: [.sortedKeys])
    }

    static func span(_ s: FinishedSpan) -> [String: Any] {
        var out: [String: Any] = [
            "traceId": s.traceId,
            "spanId": s.spanId,
            "name": s.name,
            "kind": kind(s.kind),
            "startTimeUnixNano": String(s.startUnixNano),
            "endTimeUnixNano": String(s.endUnixNano),
            "attributes": attributes(s.attributes),
        ]
        if let parent = s.parentSpanId { out["parentSpanId"] = parent }
        if let status = s.status { out["status"] = ["code": status == "error" ? 2 : status == "ok" ? 1 : 0] }
        if !s.events.isEmpty {
            out["events"] = s.events.map { ["name": $0, "timeUnixNano": String(s.endUnixNano)] as [String: Any] }
        }
        let links = s.links.compactMap(link)
        if !links.isEmpty { out["links"] = links }
        return out
    }

    /// `SPAN_KIND_*`: unspecified 0, internal 1, server 2, client 3, producer 4, consumer 5.
    static func kind(_ name: String) -> Int {
        switch name {
        case "internal": 1
        case "server": 2
        case "client": 3
        case "producer": 4
        case "consumer": 5
        default: 0
        }
    }

    static func attributes(_ values: [String: String]) -> [[String: Any]] {
        values.keys.sorted().map { ["key": $0, "value": ["stringValue": values[$0]!]] }
    }

    /// A link kept as a `traceparent` (`00-<trace>-<span>-<flags>`).
    static func link(_ traceparent: String) -> [String: Any]? {
        let parts = traceparent.split(separator: "-")
        guard parts.count == 4, parts[1].count == 32, parts[2].count == 16 else { return nil }
        return ["traceId": String(parts[1]), "spanId": String(parts[2])]
    }
}
