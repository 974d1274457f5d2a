import Logging
import Messaging
import PostgresNIO
import Tracing

/// What an event handler gets besides the payload.
public struct EventContext: Sendable {
    /// The event.
    public let event: DeliveredEvent
    /// A logger with the event's type and id.
    public let logger: Logger
    /// The context of the event's process span (batch handlers pass it to what they publish).
    public var traceContext: ServiceContext = .topLevel

    /// A context for `event` (the consumer builds these; tests and tools that apply an event
    /// themselves too).
    public init(event: DeliveredEvent, logger: Logger, traceContext: ServiceContext = .topLevel) {
        self.event = event
        self.logger = logger
        self.traceContext = traceContext
    }

    /// The envelope.
    public var envelope: Envelope { event.envelope }
}

/// What a consumer does with each event type of one stream, each handler applied inside the
/// consumer's transaction.
///
/// Built for a stream's ``EventCatalogue`` (`EventHandlers(AlarmsEvents.self)`): every type of
/// the stream is either handled (``on(_:_:)``, ``onBatch(_:_:)``) or ignored (``ignore(_:)``),
/// written down where the consumer is declared. A consumer that leaves a type out does not start
/// (``unchosen``), so adding an event type to a stream makes each of its consumers choose, instead
/// of silently dropping it.
public struct EventHandlers: Sendable {
    public typealias Handler = @Sendable (EventContext, PostgresConnection) async throws -> Void
    /// Handles a run of consecutive events (in order) whose types share the handler.
    public typealias BatchHandler = @Sendable ([EventContext], PostgresConnection) async throws -> Void
    /// The stream these handlers consume.
    public let stream: String
    /// Every type of the stream, from its catalogue.
    let catalogue: [String]
    /// Each type of the catalogue and the highest payload version this build reads.
    let versions: [String: Int]
    var handlers: [String: Handler] = [:]
    var batchHandlers: [String: (key: String, handler: BatchHandler)] = [:]
    var ignored: Set<String> = []

    /// Handlers for the stream of `catalogue`.
    public init<C: EventCatalogue>(_ catalogue: C.Type) {
        stream = C.stream
        self.catalogue = C.all.map(\.type)
        self.versions = Dictionary(C.all.map { ($0.type, $0.version) }, uniquingKeysWith: max)
    }

    /// Handles `event`, its payload decoded as the event's payload type (a payload that does
    /// not decode dead-letters the event).
    public mutating func on<P>(
        _ event: TypedEvent<P>,
        _ handler: @escaping @Sendable (P, EventContext, PostgresConnection) async throws -> Void
    ) {
        handlers[event.type] = { context, connection in
            let p = try context.envelope.payload(event)
            try await handler(p, context, connection)
        }
    }

    /// Handles `types` in batches: consecutive events of these types in one delivery are given
    /// together, in order, so a handler can write them with a few statements instead of a few
    /// per event. A payload that does not decode makes the whole batch fail; the consumer then
    /// applies its events one by one and dead-letters the bad one.
    public mutating func onBatch(_ types: [any EventType], _ handler: @escaping BatchHandler) {
        let names = types.map(\.type)
        let key = names.sorted().joined(separator: ",")
        for type in names { batchHandlers[type] = (key, handler) }
    }

    /// Declares that this consumer has nothing to do for `types`: their events only move the
    /// checkpoint (in memory when a delivery holds nothing else).
    public mutating func ignore(_ types: any EventType...) {
        for t in types { ignored.insert(t.type) }
    }

    /// The handled types.
    public var types: [String] { Set(handlers.keys).union(batchHandlers.keys).sorted() }

    /// Whether `type` has a handler.
    public func handles(_ type: String) -> Bool { handlers[type] != nil || batchHandlers[type] != nil }

    /// Why this build cannot apply `envelope`, nil when it can: its type is not in the stream's
    /// catalogue this build knows, or its payload version is newer than the one it reads. A
    /// consumer stops at such an event (it does not skip it) until it is upgraded or an
    /// operator skips it. An ignored type is never a reason to stop, whatever its version.
    public func cannotHandle(_ envelope: Envelope) -> String? {
        if ignored.contains(envelope.type) { return nil }
        guard let known = versions[envelope.type] else {
            return "event type \(envelope.type) is unknown to this build"
        }
        guard envelope.version <= known else {
            return "\(envelope.type) version \(envelope.version) is newer than this build reads (\(known))"
        }
        return nil
    }

    /// The stream's types neither handled nor ignored (empty for a consumer that may start).
    public var unchosen: [String] {
        catalogue.filter { !handles($0) && !ignored.contains($0) }
    }

    /// Throws unless every type of the stream is handled or ignored, and the handlers are for
    /// `stream`.
    public func checkChoices(for stream: String) throws {
        guard self.stream == stream else {
            throw EventHandlersIncomplete("handlers of the \(self.stream) stream given to a consumer of the \(stream) stream")
        }
        let missing = unchosen
        guard missing.isEmpty else {
            throw EventHandlersIncomplete("the consumer of the \(stream) stream makes no choice about \(missing.joined(separator: ", ")): handle each (on, onBatch) or ignore it")
        }
    }
}

/// A consumer's handlers leave a type of its stream without a choice (or name another stream).
public struct EventHandlersIncomplete: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
