import Foundation
import Logging
import Messaging
import Tracing
import Synchronization

/// A swift-log handler writing one JSON object per line to standard error: what container
/// log collectors expect. Fields: `ts`, `level`, `service`, `instance`, `logger`, `msg`,
/// then the metadata.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let service: String
    private let instance: String
    private let output: LogOutput

    public init(label: String, service: String, instance: String, level: Logger.Level, output: LogOutput,
                metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.service = service
        self.instance = instance
        self.logLevel = level
        self.output = output
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields: [String: JSONValue] = [
            "ts": .string(ISOTime.format(Date())),
            "level": .string(event.level.rawValue),
            "service": .string(service),
            "instance": .string(instance),
            "logger": .string(label),
            "msg": .string("\(event.message)"),
        ]
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { a, _ in a } }
        if let extra = event.metadata { all.merge(extra) { _, b in b } }
        for (k, v) in all where fields[k] == nil { fields[k] = Self.json(v) }
        guard var line = try? JSONCoding.encode(fields) else { return }
        line.append(0x0A)
        output.write(line)
    }

    static func json(_ value: Logger.MetadataValue) -> JSONValue {
        switch value {
        case .string(let s): .string(s)
        case .stringConvertible(let c): .string(c.description)
        case .array(let a): .array(a.map(json))
        case .dictionary(let d): .object(d.mapValues(json))
        }
    }
}

extension LogSetup {
    /// `trace_id` and `span_id` of the current span (``ChronirTracer``, whose spans go to the
    /// span file and over OTLP alike); nothing outside a span.
    static let traceMetadata = Logger.MetadataProvider {
        guard let identity = ServiceContext.current?.traceIdentity else { return [:] }
        return ["trace_id": .string(identity.traceID), "span_id": .string(identity.spanID)]
    }
}

/// Where log lines go: standard error, serialized so lines never interleave.
public final class LogOutput: Sendable {
    private let lock = Mutex(())

    public init() {}

    func write(_ data: Data) {
        lock.withLock { _ in
            data.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = Glibc.write(2, raw.baseAddress! + offset, raw.count - offset)
                    if n <= 0 { return }
                    offset += n
                }
            }
        }
    }
}

/// Builds loggers from `CHRONIR_LOG_LEVEL` (default `info`) and `CHRONIR_LOG_FORMAT`
/// (`json`, or `text` for people at a terminal; default `text` when stderr is a terminal).
public struct LogSetup: Sendable {
    public let level: Logger.Level
    public let json: Bool
    let service: String
    let instance: String
    let output = LogOutput()

    public init(service: String, instance: String, environment: ServiceEnvironment) throws {
        self.service = service
        self.instance = instance
        let levelText = environment.string("CHRONIR_LOG_LEVEL", "info")
        guard let level = Logger.Level(rawValue: levelText) else {
            throw ServiceEnvironment.Invalid("CHRONIR_LOG_LEVEL=\"\(levelText)\" must be one of trace, debug, info, notice, warning, error, critical")
        }
        self.level = level
        let format = environment.string("CHRONIR_LOG_FORMAT", isatty(2) != 0 ? "text" : "json")
        guard format == "json" || format == "text" else {
            throw ServiceEnvironment.Invalid("CHRONIR_LOG_FORMAT=\"\(format)\" must be json or text")
        }
        self.json = format == "json"
    }

    /// A logger with the given label. Lines logged inside a span (a request, an event being
    /// applied) carry its `trace_id` and `span_id` (``traceMetadata``).
    public func logger(_ label: String) -> Logger {
        let service = self.service, instance = self.instance, level = self.level, output = self.output, json = self.json
        let provider = Self.traceMetadata
        var logger = Logger(label: label) { label in
            if json {
                return JSONLogHandler(label: label, service: service, instance: instance, level: level, output: output,
                                      metadataProvider: provider)
            }
            var handler = StreamLogHandler.standardError(label: "\(service) \(label)", metadataProvider: provider)
            handler.logLevel = level
            return TextLogHandler(inner: handler)
        }
        logger.logLevel = level
        return logger
    }
}
