import Foundation
import Logging
import Tracing

/// What a handler knows about the request it is answering.
public struct RPCContext: Sendable {
    /// The request envelope (payload still raw).
    public let envelope: Envelope
    /// The trace context of the request's span.
    public let serviceContext: ServiceContext
    private let baseLogger: Logger

    /// The user on whose behalf the request was made, if any.
    public var actor: String? { envelope.actor }
    /// The principal that sent the request (its CURVE key), or nil on a plain bus.
    public let caller: String?
    /// The raw bytes sent after the envelope (``EnvelopeHeader/attachment``), if any.
    public let attachment: Data?

    /// A logger with the request's type, id and actor as metadata (built when asked for:
    /// most requests never log).
    public var logger: Logger {
        var l = baseLogger
        l[metadataKey: "type"] = "\(envelope.type)"
        l[metadataKey: "request"] = "\(envelope.id)"
        if let actor = envelope.actor { l[metadataKey: "actor"] = "\(actor)" }
        return l
    }

    public init(envelope: Envelope, logger: Logger, serviceContext: ServiceContext, caller: String? = nil, attachment: Data? = nil) {
        self.envelope = envelope
        self.caller = caller
        self.attachment = attachment
        self.baseLogger = logger
        self.serviceContext = serviceContext
    }

    /// The actor, or a `CA012` error when the request carries none.
    public func requireActor() throws -> String {
        guard let a = actor, !a.isEmpty else { throw ServiceError(.authRequired, "this operation needs an authenticated user") }
        return a
    }
}

/// Where a server runs a handler.
public enum HandlerPlacement: Sendable {
    /// On the global concurrent executor (the default): any handler.
    case pool
    /// On the server socket's own thread, like the request's decoding and its reply: no thread
    /// hop to start the request or to send its answer. Only for handlers that compute little
    /// and mostly wait (a statement, a batch): while one of its jobs runs the socket reads and
    /// sends nothing.
    case socketThread
}

/// The table of message types a server answers, built before the server starts.
public struct RPCRouter: Sendable {
    /// A handler: takes the request, returns the reply payload (raw JSON), or nil for a
    /// one-way message that gets no reply.
    public typealias RawHandler = @Sendable (RPCContext) async throws -> Data?

    private(set) var handlers: [String: RawHandler] = [:]
    private(set) var access: [String: MethodAccess] = [:]
    private(set) var placements: [String: HandlerPlacement] = [:]

    public init() {}

    /// Registers a typed handler for `method`.
    /// `placement`: where the handler runs (``HandlerPlacement``).
    public mutating func on<M: RPCMethod>(
        _ method: M.Type, placement: HandlerPlacement = .pool,
        _ handler: @escaping @Sendable (M.Request, RPCContext) async throws -> M.Response
    ) {
        access[M.type] = M.access
        placements[M.type] = placement
        handlers[M.type] = { context in
            let request: M.Request
            do {
                request = try JSONCoding.decoder().decode(M.Request.self, from: context.envelope.payload)
            } catch let error as DecodingError {
                throw ServiceError(.validationFailed, JSONCoding.describe(error))
            }
            return try JSONCoding.encode(try await handler(request, context))
        }
    }

    /// Registers a handler for a one-way message type (no reply is sent).
    public mutating func onOneWay(_ type: String, access: MethodAccess = .services,
                                  _ handler: @escaping @Sendable (RPCContext) async throws -> Void) {
        self.access[type] = access
        placements[type] = .pool
        handlers[type] = { context in
            try await handler(context)
            return nil
        }
    }

    /// Adds every handler of `other` (later registrations win).
    public mutating func merge(_ other: RPCRouter) {
        handlers.merge(other.handlers) { _, new in new }
        access.merge(other.access) { _, new in new }
        placements.merge(other.placements) { _, new in new }
    }

    /// The registered message types.
    public var types: [String] { handlers.keys.sorted() }
}
