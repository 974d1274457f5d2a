import ArgumentParser
import Foundation
import Messaging
import ServiceKit

/// `chronirctl trace <trace-id> --files a.jsonl b.jsonl`: the path of a message across the
/// services, from the span files they write (`CHRONIR_TRACE_FILE`), as an indented timeline.
/// Spans of other traces that link to it (a fire caused by this creation) follow, marked ↪.
struct TraceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace", abstract: "Print a trace's spans across services as an indented timeline.")

    @Argument(help: "The 32-hex-digit trace id (as in a traceparent or a traceresponse header).")
    var traceId: String

    @Option(parsing: .upToNextOption, help: "Span files (JSON lines). Default: $CHRONIR_TRACE_FILE, else every *.jsonl in $CHRONIR_TRACE_DIR or .run/traces (where `make run` writes them).")
    var files: [String] = []

    @Flag(help: "Print the spans as JSON lines instead.")
    var json = false

    func run() throws {
        let id = traceId.lowercased()
        guard id.count == 32, id.allSatisfy(\.isHexDigit) else { throw ValidationError("a trace id is 32 hex digits") }
        let paths = try Self.spanFiles(given: files, environment: ProcessInfo.processInfo.environment)
        var spans: [FinishedSpan] = []
        for path in paths {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw ValidationError("cannot read \(path)") }
            for line in text.split(separator: "\n") {
                if let s = try? JSONCoding.decoder().decode(FinishedSpan.self, from: Data(line.utf8)) { spans.append(s) }
            }
        }
        let own = spans.filter { $0.traceId == id }
        let linked = spans.filter { s in s.traceId != id && s.links.contains { $0.contains(id) } }
        guard !own.isEmpty || !linked.isEmpty else { throw ValidationError("no span of trace \(id) in \(paths.joined(separator: ", "))") }
        if json {
            for s in own + linked { print(String(decoding: try JSONCoding.encode(s), as: UTF8.self)) }
            return
        }
        let start = (own + linked).map(\.startUnixNano).min() ?? 0
        print("trace \(id): \(own.count) span(s)" + (linked.isEmpty ? "" : ", \(linked.count) linked"))
        print(Self.render(own, start: start, marker: ""))
        // Spans of other traces linking here, each with its own subtree.
        for root in linked.sorted(by: { $0.startUnixNano < $1.startUnixNano }) {
            let subtree = spans.filter { $0.traceId == root.traceId }
            print(Self.render(subtree, start: start, marker: "↪ ", only: root.spanId))
        }
    }

    /// The span files to read: those given, else `CHRONIR_TRACE_FILE`, else every `*.jsonl` of
    /// `CHRONIR_TRACE_DIR` or of `.run/traces` under the working directory (`make run`'s). A
    /// `CHRONIR_TRACE_FILE` naming `{instance}` is a pattern for replicas (compose), not a file:
    /// the directory is read instead.
    static func spanFiles(given: [String], environment: [String: String]) throws -> [String] {
        if !given.isEmpty { return given }
        if let file = environment["CHRONIR_TRACE_FILE"], !file.isEmpty, !file.contains("{instance}") { return [file] }
        let directory = environment["CHRONIR_TRACE_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? ".run/traces"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let found = names.filter { $0.hasSuffix(".jsonl") }.sorted().map { (directory as NSString).appendingPathComponent($0) }
        guard !found.isEmpty else {
            throw ValidationError("no span files in \(directory): give them with --files, or set CHRONIR_TRACE_FILE or CHRONIR_TRACE_DIR")
        }
        return found
    }

    /// Lines `+offset  duration  service/instance  name  attributes`, children indented under parents.
    static func render(_ spans: [FinishedSpan], start: UInt64, marker: String, only root: String? = nil) -> String {
        let ids = Set(spans.map(\.spanId))
        var children: [String: [FinishedSpan]] = [:]
        var roots: [FinishedSpan] = []
        for s in spans {
            if let p = s.parentSpanId, ids.contains(p) { children[p, default: []].append(s) } else { roots.append(s) }
        }
        if let root { roots = spans.filter { $0.spanId == root } }
        var lines: [String] = []
        func walk(_ s: FinishedSpan, _ depth: Int) {
            let offset = Double(s.startUnixNano &- start) / 1e6
            let duration = Double(s.endUnixNano &- s.startUnixNano) / 1e6
            var attrs: [String] = []
            for key in ["messaging.message.type", "messaging.destination.name", "messaging.message.id", "http.request.method", "url.path",
                        "http.response.status_code"] {
                if let v = s.attributes[key] { attrs.append("\(key.split(separator: ".").last!)=\(v)") }
            }
            let pad = String(repeating: "  ", count: depth)
            lines.append(String(format: "%@%9.2f ms %8.2f ms  ", depth == 0 ? marker : "", offset, duration)
                         + "\(pad)\(s.service) \(s.name)" + (attrs.isEmpty ? "" : "  [\(attrs.joined(separator: " "))]")
                         + (s.status.map { $0 == "error" || $0 == "\("error")" ? "  ERROR" : "" } ?? ""))
            for c in (children[s.spanId] ?? []).sorted(by: { $0.startUnixNano < $1.startUnixNano }) { walk(c, depth + 1) }
        }
        for r in roots.sorted(by: { $0.startUnixNano < $1.startUnixNano }) { walk(r, 0) }
        return lines.joined(separator: "\n")
    }
}
