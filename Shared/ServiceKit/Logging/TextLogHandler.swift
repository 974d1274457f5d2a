import Logging
import Wire

/// The text log format (`CHRONIR_LOG_FORMAT=text`): swift-log's stream handler, with every
/// control character of the message and of string metadata written as `\u{…}` (CR and LF as
/// `\r`, `\n`), so text a client sent (a name with CR LF) cannot forge a log line.
struct TextLogHandler: LogHandler {
    var inner: StreamLogHandler

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }
    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }
    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        event.message = "\(Self.escaped(event.message.description))"
        event.metadata = event.metadata?.mapValues(Self.escaped)
        inner.log(event: event)
    }

    /// `text` with its control characters (``HumanText/isControl(_:)``) escaped.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: HumanText.isControl) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard HumanText.isControl(scalar) else { out.append(scalar); continue }
            let escape: String = switch scalar {
            case "\n": "\\n"
            case "\r": "\\r"
            case "\t": "\\t"
            default: "\\u{\(String(scalar.value, radix: 16))}"
            }
            out.append(contentsOf: escape.unicodeScalars)
        }
        return String(out)
    }

    static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let s): .string(escaped(s))
        case .stringConvertible(let c): .string(escaped(c.description))
        case .array(let a): .array(a.map(escaped))
        case .dictionary(let d): .dictionary(d.mapValues(escaped))
        }
    }
}
