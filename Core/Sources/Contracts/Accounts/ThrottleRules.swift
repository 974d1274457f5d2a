import Foundation

/// The arithmetic of the gateway's limits, pure: a token bucket (a burst of `perHour`, refilling
/// evenly) and the back-off of failed logins (past `free` failures, locked 1, 2, 4, … seconds up
/// to a cap; failures older than a day forgotten). The gateway applies it to its own memory
/// (`CHRONIR_THROTTLE_STATE=local`) and accounts to rows every gateway replica shares
/// (``ThrottleMethods``), so both count the same way.
public enum ThrottleRules {
    /// A token bucket as stored.
    public struct Bucket: Sendable, Equatable {
        public var tokens: Double
        public var at: Date
        public init(tokens: Double, at: Date) {
            self.tokens = tokens
            self.at = at
        }
    }

    /// The failed logins of one key as stored.
    public struct Failures: Sendable, Equatable {
        public var count: Int
        public var lockedUntil: Date
        public var at: Date
        public init(count: Int, lockedUntil: Date, at: Date) {
            self.count = count
            self.lockedUntil = lockedUntil
            self.at = at
        }
    }

    /// Takes a token from `bucket` (nil: a full one): the bucket after, and nil or the seconds
    /// until a token is there.
    public static func take(_ bucket: Bucket?, perHour: Int, now: Date) -> (bucket: Bucket, wait: Int?) {
        let perSecond = Double(perHour) / 3600
        let capacity = Double(perHour)
        var b = bucket ?? Bucket(tokens: capacity, at: now)
        b.tokens = min(capacity, b.tokens + max(0, now.timeIntervalSince(b.at)) * perSecond)
        b.at = now
        guard b.tokens >= 1 else { return (b, Int(((1 - b.tokens) / perSecond).rounded(.up))) }
        b.tokens -= 1
        return (b, nil)
    }

    /// `bucket` with the token a ``take(_:perHour:now:)`` took given back.
    public static func refund(_ bucket: Bucket, perHour: Int) -> Bucket {
        var b = bucket
        b.tokens = min(Double(perHour), b.tokens + 1)
        return b
    }

    /// One more failure on `failures`.
    public static func bump(_ failures: Failures?, free: Int, maxBackoffSeconds: Int, now: Date) -> Failures {
        var f = failures ?? Failures(count: 0, lockedUntil: .distantPast, at: now)
        if now.timeIntervalSince(f.at) > 86_400 { f.count = 0 }
        f.count += 1
        f.at = now
        if f.count > free {
            let seconds = min(Double(maxBackoffSeconds), pow(2, Double(min(f.count - free - 1, 30))))
            f.lockedUntil = now.addingTimeInterval(seconds)
        }
        return f
    }

    /// The whole seconds until `lockedUntil`, or nil when it has passed.
    public static func wait(until lockedUntil: Date?, now: Date) -> Int? {
        guard let lockedUntil else { return nil }
        let w = lockedUntil.timeIntervalSince(now)
        return w > 0 ? Int(w.rounded(.up)) : nil
    }

    /// The key of an account's failures from one address.
    public static func pair(account: String, address: String) -> String { address + " " + account }
}
