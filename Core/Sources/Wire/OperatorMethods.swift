import Foundation

/// The operator's requests on any service with a database (`chronirctl consumer skip`,
/// `chronirctl dead-letters …`): operator only.
extension SystemMethods {
    /// Skips the event a consumer is stopped at: it is recorded as a dead letter with the
    /// reason and the checkpoint moves past it. Only the consumer's next event can be skipped.
    public struct ConsumerSkip: RPCMethod {
        public struct Request: Codable, Sendable {
            public var stream: String
            public var seq: Int64
            public var reason: String
            public init(stream: String, seq: Int64, reason: String) {
                self.stream = stream
                self.seq = seq
                self.reason = reason
            }
        }
        public typealias Response = Empty
        public static let type = "system.consumer-skip"
        public static let access = MethodAccess.operatorOnly
    }

    /// Reads the bus key files again (as SIGHUP does): the keys listed there now are accepted
    /// from the next handshake on. Answers what is trusted now.
    public struct ReloadBusKeys: RPCMethod {
        public typealias Request = Empty
        public struct Response: Codable, Sendable {
            public var trusted: String
            public init(trusted: String) { self.trusted = trusted }
        }
        public static let type = "system.reload-bus-keys"
        public static let access = MethodAccess.operatorOnly
    }

    /// Lists dead letters, oldest first.
    public struct DeadLetters: RPCMethod {
        public struct Request: Codable, Sendable {
            public var stream: String?
            public var limit: Int?
            public init(stream: String? = nil, limit: Int? = nil) {
                self.stream = stream
                self.limit = limit
            }
        }
        public struct Response: Codable, Sendable {
            public var deadLetters: [DeadLetter]
            public init(deadLetters: [DeadLetter]) { self.deadLetters = deadLetters }
        }
        public static let type = "system.dead-letters"
        public static let access = MethodAccess.operatorOnly
    }

    /// Applies a dead letter now through the consumer's handlers (after an upgrade or a fix)
    /// and removes it, in one transaction; refused while this build still cannot handle it.
    public struct DeadLetterReplay: RPCMethod {
        public typealias Request = DeadLetterRef
        public typealias Response = Empty
        public static let type = "system.dead-letter-replay"
        public static let access = MethodAccess.operatorOnly
    }

    /// Removes a dead letter for good.
    public struct DeadLetterDrop: RPCMethod {
        public typealias Request = DeadLetterRef
        public typealias Response = Empty
        public static let type = "system.dead-letter-drop"
        public static let access = MethodAccess.operatorOnly
    }
}

/// One dead letter: an event a consumer recorded instead of applying.
public struct DeadLetter: Codable, Sendable, Equatable {
    public var stream: String
    public var seq: Int64
    public var type: String?
    public var reason: String
    public var recordedAt: Date
    public init(stream: String, seq: Int64, type: String?, reason: String, recordedAt: Date) {
        self.stream = stream
        self.seq = seq
        self.type = type
        self.reason = reason
        self.recordedAt = recordedAt
    }
}

/// A dead letter by its stream position.
public struct DeadLetterRef: Codable, Sendable {
    public var stream: String
    public var seq: Int64
    public init(stream: String, seq: Int64) {
        self.stream = stream
        self.seq = seq
    }
}
