import Contracts
import Foundation

/// The throttle's counts as one value: token buckets and failed logins, counted by
/// ``ThrottleRules`` (the arithmetic accounts applies to the rows every replica shares). The
/// gateway keeps one under a lock when it counts in its own memory
/// (`CHRONIR_THROTTLE_STATE=local`, and while accounts does not answer). Entries expire, and
/// the tables are capped, so a flood of distinct addresses cannot grow them without end.
public struct ThrottleLedger: Sendable {
    private var buckets: [String: ThrottleRules.Bucket] = [:]
    private var accounts: [String: ThrottleRules.Failures] = [:]
    private var addresses: [String: ThrottleRules.Failures] = [:]
    /// Past this many entries in a table, the ones that no longer count are dropped.
    public let maxEntries: Int

    public init(maxEntries: Int = 500_000) {
        self.maxEntries = maxEntries
    }

    /// Entries in the tables (buckets, account pairs, addresses).
    public var entries: Int { buckets.count + accounts.count + addresses.count }

    /// Takes a token from `t`'s bucket: nil, or the seconds until one is there.
    public mutating func take(_ t: ThrottleTake, now: Date) -> Int? {
        // A bucket untouched for an hour is full again: dropping it changes nothing.
        if buckets.count > maxEntries { buckets = buckets.filter { now.timeIntervalSince($0.value.at) < 3600 } }
        let id = Self.id(t)
        let (bucket, wait) = ThrottleRules.take(buckets[id], perHour: t.perHour, now: now)
        buckets[id] = bucket
        return wait
    }

    /// Gives back a token ``take(_:now:)`` took.
    public mutating func refund(_ t: ThrottleTake) {
        let id = Self.id(t)
        guard let bucket = buckets[id] else { return }
        buckets[id] = ThrottleRules.refund(bucket, perHour: t.perHour)
    }

    /// The seconds `account` from `address`, or `address` itself, still backs off (nil: none).
    public func loginWait(account: String, address: String, now: Date) -> Int? {
        let a = ThrottleRules.wait(until: accounts[ThrottleRules.pair(account: account, address: address)]?.lockedUntil, now: now) ?? 0
        let b = ThrottleRules.wait(until: addresses[address]?.lockedUntil, now: now) ?? 0
        let w = max(a, b)
        return w > 0 ? w : nil
    }

    /// A login's outcome: a failure extends the back-off of (account, address) and of the
    /// address; a success clears the pair's (never the address's: an attacker's failures from
    /// there are not forgiven by the owner's success).
    public mutating func loginOutcome(account: String, address: String, succeeded: Bool, limits: ThrottleLimits, now: Date) {
        let pair = ThrottleRules.pair(account: account, address: address)
        if succeeded {
            accounts[pair] = nil
            return
        }
        // Failures older than a day are forgotten by ``ThrottleRules/bump``: dropping them changes nothing.
        if accounts.count > maxEntries { accounts = accounts.filter { now.timeIntervalSince($0.value.at) < 86_400 } }
        if addresses.count > maxEntries { addresses = addresses.filter { now.timeIntervalSince($0.value.at) < 86_400 } }
        accounts[pair] = ThrottleRules.bump(accounts[pair], free: limits.accountFailuresFree, maxBackoffSeconds: limits.maxBackoffSeconds, now: now)
        addresses[address] = ThrottleRules.bump(addresses[address], free: limits.addressFailuresFree,
                                                maxBackoffSeconds: limits.maxBackoffSeconds, now: now)
    }

    private static func id(_ t: ThrottleTake) -> String { t.bucket + "\u{0}" + t.key }
}
