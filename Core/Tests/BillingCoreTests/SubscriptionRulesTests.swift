import BillingCore
import Contracts
import Foundation
import Testing

/// The subscription state machine and the entitlement it gives, without a store, a database or
/// a clock: every state against both sides of its end, every notification type, every Play state.
@Suite("Subscription rules (BillingCore)")
struct SubscriptionRulesTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let day: TimeInterval = 86_400

    static func sub(_ id: String = "s", tier: Tier = .plus, state: SubscriptionState = .active, platform: StorePlatform = .ios,
                    expiry: Date? = now.addingTimeInterval(day), grace: Date? = nil, autoRenewing: Bool = true) -> Subscription {
        Subscription(id: id, uid: "u1", platform: platform, productId: "p", tier: tier, state: state, originalTransactionId: "t",
                     startDate: nil, expiryDate: expiry, gracePeriodExpiresAt: grace, autoRenewing: autoRenewing, cancelledAt: nil, updatedAt: now)
    }

    struct GivesCase: Sendable, CustomTestStringConvertible {
        var state: SubscriptionState
        var expiryIn: TimeInterval?
        var graceIn: TimeInterval?
        var until: TimeInterval?   // seconds after now, nil: gives nothing
        var testDescription: String { "\(state) expiry \(expiryIn.map { "\($0)" } ?? "none") grace \(graceIn.map { "\($0)" } ?? "none")" }
    }

    @Test("which subscription gives its tier, and until when", arguments: [
        GivesCase(state: .active, expiryIn: 60, graceIn: nil, until: 60),
        GivesCase(state: .active, expiryIn: 0, graceIn: nil, until: nil),          // the instant of expiry gives nothing
        GivesCase(state: .active, expiryIn: -60, graceIn: 3600, until: nil),       // active past expiry: the sweep's to move
        GivesCase(state: .active, expiryIn: nil, graceIn: nil, until: nil),
        GivesCase(state: .grace, expiryIn: -60, graceIn: 3600, until: 3600),
        GivesCase(state: .grace, expiryIn: -60, graceIn: 0, until: nil),
        GivesCase(state: .grace, expiryIn: 60, graceIn: nil, until: nil),
        GivesCase(state: .billingRetry, expiryIn: 60, graceIn: 60, until: nil),
        GivesCase(state: .expired, expiryIn: 60, graceIn: 60, until: nil),
        GivesCase(state: .revoked, expiryIn: 60, graceIn: 60, until: nil),
        GivesCase(state: "paused_by_store", expiryIn: 60, graceIn: 60, until: nil),   // a state this release does not know
    ])
    func gives(c: GivesCase) {
        let s = Self.sub(state: c.state, expiry: c.expiryIn.map { Self.now.addingTimeInterval($0) }, grace: c.graceIn.map { Self.now.addingTimeInterval($0) })
        #expect(SubscriptionRules.givesTier(s, now: Self.now) == c.until.map { Self.now.addingTimeInterval($0) })
        let e = SubscriptionRules.entitlement([s], now: Self.now)
        #expect(e.tier == (c.until == nil ? .free : .plus))
        #expect(e.state == (c.until == nil ? "none" : c.state.rawValue))
    }

    @Test("the highest tier wins; of the same tier, the one lasting longer; nothing is free/none")
    func entitlementChoice() {
        let plusLong = Self.sub("a", tier: .plus, expiry: Self.now.addingTimeInterval(30 * Self.day))
        let premiumGrace = Self.sub("b", tier: .premium, state: .grace, expiry: Self.now.addingTimeInterval(-Self.day), grace: Self.now.addingTimeInterval(Self.day))
        let premiumExpired = Self.sub("c", tier: .premium, state: .expired)
        let e = SubscriptionRules.entitlement([plusLong, premiumExpired, premiumGrace], now: Self.now)
        #expect(e.tier == .premium && e.state == "grace" && e.expiresAt == Self.now.addingTimeInterval(Self.day))
        #expect(e.subscriptions.count == 3)
        let short = Self.sub("d", tier: .plus, expiry: Self.now.addingTimeInterval(Self.day))
        #expect(SubscriptionRules.entitlement([short, plusLong], now: Self.now).expiresAt == plusLong.expiryDate)
        #expect(SubscriptionRules.entitlement([plusLong, short], now: Self.now).expiresAt == plusLong.expiryDate)
        let none = SubscriptionRules.entitlement([], now: Self.now)
        #expect(none.tier == .free && none.state == "none" && none.expiresAt == nil)
    }

    @Test("the sweep: an auto-renewing subscription past expiry enters its store's grace; anything else expires")
    func expirySteps() {
        let expiry = Self.now.addingTimeInterval(-60)
        let (apple, google) = (16 * Self.day, 7 * Self.day)
        func step(_ s: Subscription) -> SubscriptionRules.ExpiryStep { SubscriptionRules.expiryStep(s, appleGrace: apple, googleGrace: google) }
        #expect(step(Self.sub(platform: .ios, expiry: expiry)) == .enterGrace(until: expiry.addingTimeInterval(apple)))
        #expect(step(Self.sub(platform: .android, expiry: expiry)) == .enterGrace(until: expiry.addingTimeInterval(google)))
        // A store this release does not know: the shorter grace, not Google's by default.
        #expect(step(Self.sub(platform: "huawei", expiry: expiry)) == .enterGrace(until: expiry.addingTimeInterval(google)))
        #expect(SubscriptionRules.gracePeriod(of: "huawei", apple: 3 * Self.day, google: 7 * Self.day) == 3 * Self.day)
        #expect(step(Self.sub(expiry: expiry, autoRenewing: false)) == .expire)
        #expect(step(Self.sub(state: .grace, expiry: expiry, grace: Self.now)) == .expire)
        #expect(step(Self.sub(expiry: nil)) == .expire)
        #expect(step(Self.sub(state: .billingRetry, expiry: expiry)) == .expire)
    }

    @Test("an App Store transaction by itself: revoked, active before its expiry, else expired")
    func appleState() {
        #expect(SubscriptionRules.appleState(revoked: true, expires: Self.now.addingTimeInterval(60), now: Self.now) == .revoked)
        #expect(SubscriptionRules.appleState(revoked: false, expires: Self.now.addingTimeInterval(60), now: Self.now) == .active)
        #expect(SubscriptionRules.appleState(revoked: false, expires: Self.now, now: Self.now) == .expired)
        #expect(SubscriptionRules.appleState(revoked: false, expires: nil, now: Self.now) == .expired)
    }

    struct NoteCase: Sendable, CustomTestStringConvertible {
        var type: String
        var subtype: String?
        var state: SubscriptionState?
        var grace: TimeInterval?     // after now
        var autoRenewing: Bool
        var cancelled: Bool
        var testDescription: String { "\(type)\(subtype.map { "/\($0)" } ?? "")" }
    }

    /// Held before each notification: in billing retry, a grace end an hour ahead, auto-renewing, not cancelled.
    static let held = SubscriptionRules.AppleHeld(state: .billingRetry, gracePeriodExpiresAt: now.addingTimeInterval(3600), autoRenewing: true, cancelledAt: nil)

    @Test("each App Store notification type", arguments: [
        NoteCase(type: "SUBSCRIBED", subtype: nil, state: nil, grace: nil, autoRenewing: true, cancelled: false),
        NoteCase(type: "DID_RENEW", subtype: nil, state: nil, grace: nil, autoRenewing: true, cancelled: false),
        NoteCase(type: "OFFER_REDEEMED", subtype: nil, state: nil, grace: nil, autoRenewing: true, cancelled: false),
        NoteCase(type: "DID_CHANGE_RENEWAL_PREF", subtype: nil, state: nil, grace: nil, autoRenewing: true, cancelled: false),
        NoteCase(type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", state: .grace, grace: 7200, autoRenewing: true, cancelled: false),
        NoteCase(type: "DID_FAIL_TO_RENEW", subtype: nil, state: .billingRetry, grace: 3600, autoRenewing: true, cancelled: false),
        NoteCase(type: "GRACE_PERIOD_EXPIRED", subtype: nil, state: .expired, grace: 3600, autoRenewing: true, cancelled: false),
        NoteCase(type: "EXPIRED", subtype: "VOLUNTARY", state: .expired, grace: 3600, autoRenewing: true, cancelled: false),
        NoteCase(type: "REFUND", subtype: nil, state: .revoked, grace: 3600, autoRenewing: true, cancelled: false),
        NoteCase(type: "REVOKE", subtype: nil, state: .revoked, grace: 3600, autoRenewing: true, cancelled: false),
        NoteCase(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", state: .billingRetry, grace: 3600, autoRenewing: false, cancelled: true),
        NoteCase(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", state: .billingRetry, grace: 3600, autoRenewing: true, cancelled: false),
        NoteCase(type: "PRICE_INCREASE", subtype: nil, state: .billingRetry, grace: 3600, autoRenewing: true, cancelled: false),   // kept as held
    ])
    func appleNotifications(c: NoteCase) {
        let change = SubscriptionRules.appleNotification(type: c.type, subtype: c.subtype, held: Self.held, renewalAutoRenews: nil,
                                                         renewalGraceEnds: Self.now.addingTimeInterval(7200), transactionExpires: Self.now,
                                                         appleGrace: 16 * Self.day, at: Self.now)
        #expect(change == SubscriptionRules.AppleChange(state: c.state, gracePeriodExpiresAt: c.grace.map { Self.now.addingTimeInterval($0) },
                                                        autoRenewing: c.autoRenewing, cancelledAt: c.cancelled ? Self.now : nil))
    }

    @Test("a grace notification without an end in the renewal info: the transaction's expiry plus Apple's grace; the renewal info's auto-renew wins")
    func appleGraceFallback() {
        let change = SubscriptionRules.appleNotification(type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", held: nil, renewalAutoRenews: false,
                                                         renewalGraceEnds: nil, transactionExpires: Self.now, appleGrace: 16 * Self.day, at: Self.now)
        #expect(change.state == .grace && change.gracePeriodExpiresAt == Self.now.addingTimeInterval(16 * Self.day))
        #expect(change.autoRenewing == false && change.cancelledAt == nil)
        // Nothing held and an unknown type: the state the transaction shows (nil), auto-renewing by default.
        let unknown = SubscriptionRules.appleNotification(type: "SOMETHING_NEW", subtype: nil, held: nil, renewalAutoRenews: nil,
                                                          renewalGraceEnds: nil, transactionExpires: nil, appleGrace: 0, at: Self.now)
        #expect(unknown == SubscriptionRules.AppleChange(state: nil, gracePeriodExpiresAt: nil, autoRenewing: true, cancelledAt: nil))
    }

    @Test("each Google Play subscription state", arguments: [
        ("SUBSCRIPTION_STATE_ACTIVE", 60.0, SubscriptionState.active, TimeInterval?.none),
        ("SUBSCRIPTION_STATE_IN_GRACE_PERIOD", 60.0, .grace, 60.0),
        ("SUBSCRIPTION_STATE_CANCELED", 60.0, .active, nil),      // cancelled, paid until its expiry
        ("SUBSCRIPTION_STATE_CANCELED", -60.0, .expired, nil),
        ("SUBSCRIPTION_STATE_ON_HOLD", 60.0, .billingRetry, nil),
        ("SUBSCRIPTION_STATE_PENDING", 60.0, .billingRetry, nil),
        ("SUBSCRIPTION_STATE_EXPIRED", 60.0, .expired, nil),
        ("SUBSCRIPTION_STATE_SOMETHING_NEW", 60.0, .expired, nil),
    ])
    func googleStates(play: String, expiryIn: TimeInterval, state: SubscriptionState, graceIn: TimeInterval?) {
        let r = SubscriptionRules.googleState(play, expiry: Self.now.addingTimeInterval(expiryIn), now: Self.now, googleGrace: 7 * Self.day)
        #expect(r.state == state)
        #expect(r.gracePeriodExpiresAt == graceIn.map { Self.now.addingTimeInterval($0) })
    }

    @Test("in grace without an expiry from Play: Google's grace from now")
    func googleGraceFallback() {
        let r = SubscriptionRules.googleState("SUBSCRIPTION_STATE_IN_GRACE_PERIOD", expiry: nil, now: Self.now, googleGrace: 7 * Self.day)
        #expect(r.state == .grace && r.gracePeriodExpiresAt == Self.now.addingTimeInterval(7 * Self.day))
    }

    @Test("the words travel as the strings they were, an unknown one kept")
    func words() throws {
        let s = Self.sub(state: "paused_by_store", platform: "huawei")
        let json = try JSONEncoder().encode(s)
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains(#""state":"paused_by_store""#) && text.contains(#""platform":"huawei""#))
        let back = try JSONDecoder().decode(Subscription.self, from: json)
        #expect(back.state == "paused_by_store" && !back.state.isKnown && back.platform.rawValue == "huawei")
        #expect(SubscriptionState.known.allSatisfy { $0.isKnown } && StorePlatform.ios.isKnown)
        #expect(try JSONDecoder().decode(SubscriptionState.self, from: Data(#""billing_retry""#.utf8)) == .billingRetry)
    }
}
