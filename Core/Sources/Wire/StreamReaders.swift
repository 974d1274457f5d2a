/// Who may read each event stream, on a secured bus: subscribe to its producer's PUB socket
/// (checked in the CURVE handshake, ZAP domain `events:<stream>`) and ask `events.replay` for it.
/// A stream carries what its consumers need and nothing a key that does not consume it should
/// see (invitation codes, e-mail addresses, push tokens): least privilege inside, as
/// ``BusPolicy`` is for methods. The operator reads every stream.
///
/// The table is the suite's subscriptions: a service that subscribes to a stream it is not
/// listed under fails at start (`ServiceRuntime.makeSubscriber`), so the table cannot fall
/// behind the code (`docs/architecture.md` § Trust boundary).
public enum StreamReaders {
    /// The consumers of each stream, by producer.
    public static let table: [String: Set<String>] = [
        "accounts": ["alarms", "billing", "invitations", "notifications", "gateway"],
        "alarms": ["alarms", "invitations", "notifications", "scheduler"],
        "billing": ["accounts", "alarms"],
        "invitations": ["alarms", "notifications"],
        "scheduler": ["alarms", "notifications"],
        "notifications": ["gateway"],
    ]

    /// The ZAP domain of the PUB socket of `stream`.
    public static func zapDomain(_ stream: String) -> String { "events:\(stream)" }

    /// Whether `principal` may read `stream`: the operator every stream, a service the streams
    /// it is listed under. A stream the table does not list (a test peer's) is not restricted.
    public static func mayRead(_ principal: String, _ stream: String) -> Bool {
        guard let readers = table[stream] else { return true }
        return principal == BusPolicy.operatorPrincipal || readers.contains(principal)
    }

    /// Whether `principal` is listed as a reader of `stream` (the check a service's own
    /// subscriptions pass at start: every suite stream is listed).
    public static func lists(_ principal: String, asReaderOf stream: String) -> Bool {
        table[stream]?.contains(principal) == true
    }

    /// Who may complete a CURVE handshake on a socket of ZAP `domain`, by domain: the readers of
    /// each stream's PUB socket (any other domain admits every trusted principal).
    public static var zapDomains: [String: Set<String>] {
        var out: [String: Set<String>] = [:]
        for (stream, readers) in table { out[zapDomain(stream)] = readers.union([BusPolicy.operatorPrincipal]) }
        return out
    }
}
