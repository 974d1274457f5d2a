/// An event type of a stream, whatever its payload: its envelope `type`. Lets a list hold
/// event types of different payloads (a batch handler's types, a stream's catalogue).
public protocol EventType: Sendable, CustomStringConvertible {
    /// The envelope `type`, `<stream>.<event>`.
    var type: String { get }
    /// The payload schema version this build writes and the highest it reads
    /// (`x-chronir-version` in `proto/events/`).
    var version: Int { get }
}

extension EventType {
    public var description: String { type }
}

/// An event type and, as a phantom, the shape of its payload: declared once in `Contracts`
/// (`AlarmsEvents.alarmUpserted`), used by the producer (`outbox.append(AlarmsEvents.alarmUpserted, state, …)`)
/// and by consumers (`handlers.on(AlarmsEvents.alarmUpserted) { state, … }`), so the compiler
/// pairs each type with its payload; no string is written twice.
///
/// A value rather than one nominal type per event: two types may share a payload
/// (`alarm-upserted` and `alarm-deleted` carry an `AlarmState`) and the names stay those of the
/// strings they replaced. It matches an envelope's `type` in a `switch` (`case AlarmsEvents.alarmDeleted:`).
///
/// `version` is the payload schema version: within one version fields are only added (optional);
/// a change that old consumers cannot read is a new version, and a consumer stops at a version
/// above the one it was built with (docs/operations.md, the compatibility rule).
public struct TypedEvent<Payload: Codable & Sendable>: EventType, Hashable {
    public let type: String
    public let version: Int

    public init(_ type: String, version: Int = 1) {
        precondition(version >= 1, "event versions start at 1")
        self.type = type
        self.version = version
    }

    public static func == (a: Self, b: Self) -> Bool { a.type == b.type }
    public func hash(into hasher: inout Hasher) { hasher.combine(type) }

    /// Whether an envelope's `type` is this event type (for `switch envelope.type`).
    public static func ~= (pattern: Self, value: String) -> Bool { pattern.type == value }
}

/// The event types a stream carries, in the order of `proto/events/`: what a consumer of the
/// stream must handle or knowingly ignore (``EventCatalogue/unhandled(by:)``).
public protocol EventCatalogue {
    /// The stream's name (its producer's service name).
    static var stream: String { get }
    /// Every event type of the stream.
    static var all: [any EventType] { get }
}

extension EventCatalogue {
    /// The types of this stream in `handled` nowhere: a consumer that lists them neither as
    /// handled nor as ignored has made no choice about them.
    public static func unhandled(by handled: Set<String>) -> [String] {
        all.map(\.type).filter { !handled.contains($0) }
    }
}

extension Envelope {
    /// The payload as `event`'s payload type (the caller checked `type`, or a handler was
    /// registered for it).
    public func payload<P>(_ event: TypedEvent<P>) throws -> P {
        try decodePayload(P.self)
    }
}
