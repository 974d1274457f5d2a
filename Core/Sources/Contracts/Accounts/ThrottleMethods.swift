import Wire

/// The gateway's limits kept where every gateway replica sees them: accounts holds the buckets
/// and login failures in PostgreSQL (`throttle_buckets`, `throttle_failures`) and applies
/// ``ThrottleRules`` to them, so N replicas allow what one does (issue 57). The gateway passes
/// the limits; accounts' clock is the one that counts.
public enum ThrottleMethods {
    /// Takes a token from bucket `bucket` of `key`.
    public struct Take: RPCMethod {
        public struct Request: Codable, Sendable {
            public var bucket: String
            public var key: String
            public var perHour: Int
            /// Give a token back instead of taking one (a mailed token that was good).
            public var refund: Bool?
            public init(bucket: String, key: String, perHour: Int, refund: Bool? = nil) {
                self.bucket = bucket
                self.key = key
                self.perHour = perHour
                self.refund = refund
            }
        }
        public struct Response: Codable, Sendable {
            /// Nil: taken; else the seconds until a token is there.
            public var retryAfterSeconds: Int?
            public init(retryAfterSeconds: Int?) { self.retryAfterSeconds = retryAfterSeconds }
        }
        public static let type = "accounts.throttle.take"
    }

    /// The back-off of logins of `account` from `address`: how long either waits.
    public struct LoginWait: RPCMethod {
        public struct Request: Codable, Sendable {
            public var account: String
            public var address: String
            public init(account: String, address: String) {
                self.account = account
                self.address = address
            }
        }
        public typealias Response = Take.Response
        public static let type = "accounts.throttle.login-wait"
    }

    /// Records a login's outcome: a failure extends the back-off of (account, address) and of
    /// the address, a success clears the pair's.
    public struct LoginOutcome: RPCMethod {
        public struct Request: Codable, Sendable {
            public var account: String
            public var address: String
            public var succeeded: Bool
            public var accountFailuresFree: Int
            public var addressFailuresFree: Int
            public var maxBackoffSeconds: Int
            public init(account: String, address: String, succeeded: Bool, accountFailuresFree: Int, addressFailuresFree: Int,
                        maxBackoffSeconds: Int) {
                self.account = account
                self.address = address
                self.succeeded = succeeded
                self.accountFailuresFree = accountFailuresFree
                self.addressFailuresFree = addressFailuresFree
                self.maxBackoffSeconds = maxBackoffSeconds
            }
        }
        public typealias Response = Empty
        public static let type = "accounts.throttle.login-outcome"
    }
}
