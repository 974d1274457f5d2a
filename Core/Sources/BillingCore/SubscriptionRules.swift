import Contracts
import Foundation

/// The subscription state machine and the entitlement it gives, with `now` passed in: what a
/// store's answer or notification makes of a subscription, what the expiry sweep does with one
/// whose time passed, and which tier a user's subscriptions give. The billing service's shell
/// verifies, reads and locks, asks these, and writes what they answer.
public enum SubscriptionRules {
    // MARK: Entitlement

    /// The entitlement `subscriptions` give at `now`: the highest tier still active (before its
    /// expiry) or in grace (before the grace ends); of two with that tier, the one lasting longer.
    /// Any other state — billing retry, expired, revoked, or one this release does not know —
    /// gives nothing.
    public static func entitlement(_ subscriptions: [Subscription], now: Date) -> Entitlement {
        var best: (tier: Tier, until: Date, state: SubscriptionState)? = nil
        for s in subscriptions {
            guard let until = givesTier(s, now: now) else { continue }
            if let b = best, !(s.tier > b.tier || (s.tier == b.tier && until > b.until)) { continue }
            best = (s.tier, until, s.state)
        }
        return Entitlement(tier: best?.tier ?? .free, expiresAt: best?.until, state: best?.state.rawValue ?? "none", subscriptions: subscriptions)
    }

    /// Until when `s` gives its tier, seen at `now` (nil: it gives nothing now).
    public static func givesTier(_ s: Subscription, now: Date) -> Date? {
        switch s.state {
        case .active: return s.expiryDate.flatMap { $0 > now ? $0 : nil }
        case .grace: return s.gracePeriodExpiresAt.flatMap { $0 > now ? $0 : nil }
        default: return nil
        }
    }

    // MARK: The expiry sweep

    /// What the sweep does with a subscription whose expiry (or grace) has passed.
    public enum ExpiryStep: Equatable, Sendable {
        /// An auto-renewing subscription past its expiry: in grace until then.
        case enterGrace(until: Date)
        /// A grace that ended, a cancelled subscription past its expiry, any other: expired.
        case expire
    }

    /// The sweep's step for `s` (one the sweep found due: active past its expiry, or in grace
    /// past its end). `appleGrace`/`googleGrace`: each store's grace period (16 and 7 days by
    /// default).
    public static func expiryStep(_ s: Subscription, appleGrace: TimeInterval, googleGrace: TimeInterval) -> ExpiryStep {
        guard s.state == .active, s.autoRenewing, let expiry = s.expiryDate else { return .expire }
        return .enterGrace(until: expiry.addingTimeInterval(gracePeriod(of: s.platform, apple: appleGrace, google: googleGrace)))
    }

    /// A store's grace period; for a store this release does not know, the shorter of the two
    /// (it gets a grace, never a longer one than a known store gives).
    public static func gracePeriod(of platform: StorePlatform, apple: TimeInterval, google: TimeInterval) -> TimeInterval {
        switch platform {
        case .ios: return apple
        case .android: return google
        default: return min(apple, google)
        }
    }

    // MARK: The App Store

    /// The state a verified App Store transaction shows by itself: revoked when it carries a
    /// revocation, active before its expiry, else expired.
    public static func appleState(revoked: Bool, expires: Date?, now: Date) -> SubscriptionState {
        if revoked { return .revoked }
        if let expires, expires > now { return .active }
        return .expired
    }

    /// What the subscription held before an App Store notification (nil: none yet).
    public struct AppleHeld: Equatable, Sendable {
        public var state: SubscriptionState
        public var gracePeriodExpiresAt: Date?
        public var autoRenewing: Bool
        public var cancelledAt: Date?

        public init(state: SubscriptionState, gracePeriodExpiresAt: Date?, autoRenewing: Bool, cancelledAt: Date?) {
            self.state = state
            self.gracePeriodExpiresAt = gracePeriodExpiresAt
            self.autoRenewing = autoRenewing
            self.cancelledAt = cancelledAt
        }
    }

    /// What an App Store notification makes of the subscription: its state (nil: the one the
    /// transaction shows, ``appleState(revoked:expires:now:)``), grace end, auto-renewal and
    /// cancellation.
    public struct AppleChange: Equatable, Sendable {
        public var state: SubscriptionState?
        public var gracePeriodExpiresAt: Date?
        public var autoRenewing: Bool
        public var cancelledAt: Date?

        public init(state: SubscriptionState?, gracePeriodExpiresAt: Date?, autoRenewing: Bool, cancelledAt: Date?) {
            self.state = state
            self.gracePeriodExpiresAt = gracePeriodExpiresAt
            self.autoRenewing = autoRenewing
            self.cancelledAt = cancelledAt
        }
    }

    /// App Store Server Notifications V2: `type` and `subtype` as Apple names them, what the
    /// subscription held, the renewal info's auto-renew status and grace end when it came with
    /// one, the transaction's expiry, Apple's grace period when the renewal info names no end,
    /// and the notification's own instant (a cancellation's time). A type this release does not
    /// know keeps what was held.
    public static func appleNotification(type: String, subtype: String?, held: AppleHeld?, renewalAutoRenews: Bool?,
                                         renewalGraceEnds: Date?, transactionExpires: Date?, appleGrace: TimeInterval,
                                         at eventAt: Date) -> AppleChange {
        var change = AppleChange(state: nil, gracePeriodExpiresAt: held?.gracePeriodExpiresAt,
                                 autoRenewing: renewalAutoRenews ?? held?.autoRenewing ?? true, cancelledAt: held?.cancelledAt)
        switch type {
        case "SUBSCRIBED", "DID_RENEW", "OFFER_REDEEMED", "DID_CHANGE_RENEWAL_PREF":
            change.state = nil
            change.gracePeriodExpiresAt = nil
        case "DID_FAIL_TO_RENEW":
            if subtype == "GRACE_PERIOD" {
                change.state = .grace
                change.gracePeriodExpiresAt = renewalGraceEnds ?? transactionExpires.map { $0.addingTimeInterval(appleGrace) }
            } else {
                change.state = .billingRetry
            }
        case "GRACE_PERIOD_EXPIRED", "EXPIRED":
            change.state = .expired
        case "REFUND", "REVOKE":
            change.state = .revoked
        case "DID_CHANGE_RENEWAL_STATUS":
            change.state = held?.state
            if subtype == "AUTO_RENEW_DISABLED" { change.autoRenewing = false; change.cancelledAt = eventAt }
            if subtype == "AUTO_RENEW_ENABLED" { change.autoRenewing = true; change.cancelledAt = nil }
        default:
            change.state = held?.state
        }
        return change
    }

    // MARK: Google Play

    /// What a Play purchase's `subscriptionState` makes of the subscription at `now`: its state
    /// and, in grace, the grace end (the purchase's expiry, else `googleGrace` from now). A
    /// cancelled subscription stays active until its expiry; on hold and pending give no tier;
    /// a state Play adds later expires it (no tier given on a word not understood).
    public static func googleState(_ playState: String, expiry: Date?, now: Date, googleGrace: TimeInterval)
        -> (state: SubscriptionState, gracePeriodExpiresAt: Date?) {
        switch playState {
        case "SUBSCRIPTION_STATE_ACTIVE": return (.active, nil)
        case "SUBSCRIPTION_STATE_IN_GRACE_PERIOD": return (.grace, expiry ?? now.addingTimeInterval(googleGrace))
        case "SUBSCRIPTION_STATE_CANCELED": return ((expiry ?? now) > now ? .active : .expired, nil)
        case "SUBSCRIPTION_STATE_ON_HOLD", "SUBSCRIPTION_STATE_PENDING": return (.billingRetry, nil)
        default: return (.expired, nil)
        }
    }
}
