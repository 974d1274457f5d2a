import Foundation
import Hummingbird
import Support
import Synchronization

/// A local OTLP/HTTP receiver as a collector is one for traces: `POST /v1/traces` with a JSON
/// `ExportTraceServiceRequest` answered 200 `{}`. Keeps every span it got, with its resource's
/// `service.name`, and refuses a body that is not OTLP/JSON with 400 (as a collector does).
final class OTLPReceiver: Sendable {
    struct ReceivedSpan: Sendable {
        var service: String
        var traceId: String
        var spanId: String
        var parentSpanId: String?
        var name: String
        var kind: Int
    }

    private let server = LocalHTTPServer()
    private let received = Mutex<[ReceivedSpan]>([])
    let refused = Mutex(0)

    var endpoint: String { server.baseURL }
    var spans: [ReceivedSpan] { received.withLock { $0 } }

    func start() async throws {
        let router = Router()
        router.post("/v1/traces") { request, _ in
            let body = try await request.body.collect(upTo: 16 << 20)
            guard request.headers[.contentType]?.hasPrefix("application/json") == true,
                  let spans = Self.parse(Data(buffer: body)) else {
                self.refused.withLock { $0 += 1 }
                return Response(status: .badRequest)
            }
            self.received.withLock { $0 += spans }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "{}")))
        }
        try await server.start(router, name: "OTLP receiver")
    }

    func stop() { server.stop() }

    /// The spans of an OTLP/JSON request, or nil when it is not one (ids must be hex of the
    /// right length, times decimal strings, as the JSON mapping of opentelemetry-proto says).
    static func parse(_ data: Data) -> [ReceivedSpan]? {
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let resourceSpans = root["resourceSpans"] as? [[String: Any]] else { return nil }
        var out: [ReceivedSpan] = []
        for rs in resourceSpans {
            let attributes = (rs["resource"] as? [String: Any])?["attributes"] as? [[String: Any]] ?? []
            let service = attributes.first { $0["key"] as? String == "service.name" }
                .flatMap { ($0["value"] as? [String: Any])?["stringValue"] as? String } ?? ""
            for ss in rs["scopeSpans"] as? [[String: Any]] ?? [] {
                for s in ss["spans"] as? [[String: Any]] ?? [] {
                    guard let trace = s["traceId"] as? String, trace.count == 32, isHex(trace),
                          let span = s["spanId"] as? String, span.count == 16, isHex(span),
                          let name = s["name"] as? String, let kind = s["kind"] as? Int,
                          let start = s["startTimeUnixNano"] as? String, UInt64(start) != nil,
                          let end = s["endTimeUnixNano"] as? String, UInt64(end) != nil else { return nil }
                    out.append(ReceivedSpan(service: service, traceId: trace, spanId: span,
                                            parentSpanId: s["parentSpanId"] as? String, name: name, kind: kind))
                }
            }
        }
        return out
    }

    private static func isHex(_ s: String) -> Bool { s.allSatisfy { $0.isHexDigit && !$0.isUppercase } }
}
