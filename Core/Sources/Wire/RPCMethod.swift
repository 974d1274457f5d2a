import Foundation

/// A request/reply operation of a service: its message type and the shapes of its request
/// and response payloads. Declared once in `Contracts` and used by both sides.
public protocol RPCMethod: Sendable {
    associatedtype Request: Codable & Sendable
    associatedtype Response: Codable & Sendable
    /// The envelope `type`, `<service>.<operation>`.
    static var type: String { get }
    /// Who may call it on a secured bus (default ``MethodAccess/edge``: the gateway and the
    /// operator; a method other services call names them).
    static var access: MethodAccess { get }
}

extension RPCMethod {
    public static var access: MethodAccess { .edge }
}

/// An empty payload (`{}`).
public struct Empty: Codable, Sendable, Equatable {
    public init() {}
}

/// The envelope types of replies.
public enum ReplyType {
    /// A successful reply; the payload is the response.
    public static let success = "rpc.reply"
    /// A failed reply; the payload is a ``ServiceError``.
    public static let error = "rpc.error"
}

/// Requests every service answers.
public enum SystemMethods {
    /// `system.health`: is the service up, and are its dependencies reachable.
    public struct Health: RPCMethod {
        public typealias Request = Empty
        public typealias Response = HealthReport
        public static let type = "system.health"
        public static let access = MethodAccess.services
    }
}

/// What a service says about itself when asked for its health.
extension SystemMethods {
    /// Where a user's uid is still found in this service's schema (operator only): the
    /// confirmation of an account deletion (`chronirctl user deletion-status`).
    public struct UserTraces: RPCMethod {
        public struct Request: Codable, Sendable {
            public var uid: String
            public init(uid: String) { self.uid = uid }
        }
        public typealias Response = UserTracesReport
        public static let type = "system.user-traces"
        public static let access = MethodAccess.operatorOnly
    }
}

extension SystemMethods {
    /// The stream this service produces (its head) and the streams it consumes (its stored
    /// checkpoints), with its dead letters: what the operations page shows as consumer lag.
    /// Read-only, for the operator and the gateway's operations route.
    public struct Streams: RPCMethod {
        public typealias Request = Empty
        public typealias Response = StreamsReport
        public static let type = "system.streams"
        public static let access = MethodAccess.principals([BusPolicy.operatorPrincipal, "gateway"])
    }
}

/// One service's stream positions (``SystemMethods/Streams``).
public struct StreamsReport: Codable, Sendable, Equatable {
    public var service: String
    /// Stream → the sequence number of its newest event (the head).
    public var produced: [String: Int64]
    /// Stream → the stored checkpoint (a consumer keeping a run of unhandled events in memory
    /// writes it within a second).
    public var consumed: [String: Int64]
    public var deadLetters: Int
    /// Consumers stopped at an event this build cannot handle (absent from older services).
    public var blocked: [BlockedConsumer]?
    public init(service: String, produced: [String: Int64], consumed: [String: Int64], deadLetters: Int,
                blocked: [BlockedConsumer]? = nil) {
        self.service = service
        self.produced = produced
        self.consumed = consumed
        self.deadLetters = deadLetters
        self.blocked = blocked
    }
}

/// Rows of one service's schema holding a uid, per `table.column` (empty: nothing left).
public struct UserTracesReport: Codable, Sendable, Equatable {
    public var service: String
    public var rows: [String: Int]
    public init(service: String, rows: [String: Int]) {
        self.service = service
        self.rows = rows
    }
}

public struct HealthReport: Codable, Sendable, Equatable {
    /// Service name, e.g. `alarms`.
    public var service: String
    /// Instance id (unique per process).
    public var instance: String
    /// `ok` or `degraded`.
    public var status: String
    /// Seconds since start.
    public var uptimeSeconds: Double
    /// Dependency checks, e.g. `["database": "ok"]`.
    public var checks: [String: String]
    /// Build version.
    public var version: String

    public init(service: String, instance: String, status: String, uptimeSeconds: Double, checks: [String: String], version: String) {
        self.service = service
        self.instance = instance
        self.status = status
        self.uptimeSeconds = uptimeSeconds
        self.checks = checks
        self.version = version
    }
}
