/// The state of a store subscription, as `subscriptions.state` stores it and `Subscription.state`
/// carries it on the wire (a string there, as before).
///
/// A word over its string (PSQLError's `Code` pattern): a state a newer release wrote is read as
/// it is and kept; every decision says what it does with one it does not know (an unknown state
/// gives no tier: `SubscriptionRules.entitlement`). Codable as its string, by the standard
/// library's `RawRepresentable` conformance.
public struct SubscriptionState: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    /// Paid up to its expiry.
    public static let active: SubscriptionState = "active"
    /// Past its expiry, a renewal failed, still giving its tier until the grace period ends.
    public static let grace: SubscriptionState = "grace"
    /// A renewal failed with no grace period (or the grace ended): the store still tries; no tier.
    public static let billingRetry: SubscriptionState = "billing_retry"
    /// Ended.
    public static let expired: SubscriptionState = "expired"
    /// Refunded or revoked by the store.
    public static let revoked: SubscriptionState = "revoked"

    /// Every state this release writes.
    public static let known: [SubscriptionState] = [.active, .grace, .billingRetry, .expired, .revoked]
    public var isKnown: Bool { Self.known.contains(self) }
    public var description: String { rawValue }
}

/// The store a subscription was bought at (`subscriptions.platform`, `Subscription.platform`):
/// `ios` (the App Store) or `android` (Google Play); another is kept as it was read.
public struct StorePlatform: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public static let ios: StorePlatform = "ios"
    public static let android: StorePlatform = "android"

    public static let known: [StorePlatform] = [.ios, .android]
    public var isKnown: Bool { Self.known.contains(self) }
    public var description: String { rawValue }
}
