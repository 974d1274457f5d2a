import BillingCore
import Contracts
import Crypto
import Foundation
import Logging
import Messaging
import Persistence
import PostgresNIO

/// Purchases, store notifications and entitlements (`chronir-api.md` §9).
struct BillingHandlers: Sendable {
    let store: SubscriptionStore
    let apple: AppleVerifier
    let play: PlayClient?
    let appleGrace: TimeInterval
    let googleGrace: TimeInterval
    let googlePushToken: String?
    let logger: Logger
    var database: Database { store.database }

    func register(into router: inout RPCRouter) {
        router.on(BillingMethods.Products.self) { _, _ in .init(products: Catalog.products, tiers: Catalog.tiers) }
        router.on(BillingMethods.Entitlements.self) { _, ctx in
            let user = try ctx.requireActor()
            return try await database.transaction { c in
                SubscriptionRules.entitlement(try await store.subscriptions(of: user, on: c), now: Date())
            }
        }
        router.on(BillingMethods.Apple.self) { req, ctx in try await appleTransaction(req.signedTransaction, user: try ctx.requireActor(), reason: "purchase") }
        router.on(BillingMethods.Google.self) { req, ctx in try await googlePurchase(req, user: try ctx.requireActor(), reason: "purchase") }
        router.on(BillingMethods.Restore.self) { req, ctx in
            let user = try ctx.requireActor()
            // Each entry is a signature check or a Play API call: the same entry counts once,
            // and a request carries at most `maxRestoreEntries` of each kind.
            let transactions = Self.distinct(req.signedTransactions ?? [], by: { $0 })
            let purchases = Self.distinct(req.purchases ?? [], by: { $0.purchaseToken })
            guard transactions.count <= Self.maxRestoreEntries, purchases.count <= Self.maxRestoreEntries else {
                throw ServiceError(.validationFailed, "restore takes at most \(Self.maxRestoreEntries) signedTransactions and \(Self.maxRestoreEntries) purchases")
            }
            for t in transactions { _ = try await appleTransaction(t, user: user, reason: "restore") }
            for p in purchases { _ = try await googlePurchase(p, user: user, reason: "restore") }
            return try await store.outbox.transaction { c in try await store.resolve(user, reason: "restore", on: c) }
        }
        router.on(BillingMethods.AppleNotification.self) { req, _ in try await appleNotification(req.signedPayload) }
        router.on(BillingMethods.GoogleNotification.self) { req, _ in try await googleNotification(req) }
    }

    /// The most distinct entries of each kind one restore request may carry.
    static let maxRestoreEntries = 50

    /// `items` without repeats of `key`, in order.
    static func distinct<T>(_ items: [T], by key: (T) -> String) -> [T] {
        var seen = Set<String>()
        return items.filter { seen.insert(key($0)).inserted }
    }

    func tier(_ productId: String) throws -> Tier {
        guard let t = Catalog.tier(of: productId) else { throw ServiceError(.receiptInvalid, "unknown product \(productId)") }
        return t
    }

    // MARK: App Store

    func appleUpdate(_ t: AppleVerifier.Transaction, user: String, state: SubscriptionState? = nil, graceExpires: Date? = nil,
                     autoRenewing: Bool = true, cancelledAt: Date? = nil, eventAt: Date) throws -> SubscriptionStore.Update {
        let derived = SubscriptionRules.appleState(revoked: t.revocationDate != nil, expires: t.expiresDate?.msDate, now: Date())
        return .init(id: "apple:\(t.originalTransactionId)", userId: user, platform: .ios, productId: t.productId, tier: try tier(t.productId),
                     state: state ?? derived, originalTransactionId: t.originalTransactionId, start: t.originalPurchaseDate?.msDate ?? t.purchaseDate?.msDate,
                     expiry: t.expiresDate?.msDate, graceExpires: graceExpires, autoRenewing: autoRenewing, cancelledAt: cancelledAt, eventAt: eventAt)
    }

    /// `POST /v1/subscriptions/apple`: a signed transaction from the device.
    /// A transaction that carries `appAccountToken` (the app sets it to the buyer's uid) is
    /// taken only from that user: someone else's signed transaction is 403 `CA007`.
    func appleTransaction(_ jws: String, user: String, reason: String) async throws -> Entitlement {
        let t = try await apple.transaction(jws)
        if let token = t.appAccountToken, token.lowercased() != user.lowercased() {
            throw ServiceError(.permissionDenied, "this transaction was bought by another account (its appAccountToken is not yours)")
        }
        let u = try appleUpdate(t, user: user, eventAt: t.signedDate.msDate)
        let e: Entitlement = try await store.outbox.transaction { c in
            try await ensureNotAnothers(u.id, user: user, on: c)
            try await store.apply(u, reason: reason, on: c)
            return try await store.resolve(user, reason: reason, on: c)
        }
        return e
    }

    /// `POST /v1/webhooks/apple`: App Store Server Notifications V2, idempotent by
    /// `notificationUUID`, ordered by `signedDate`.
    func appleNotification(_ jws: String) async throws -> BillingMethods.AppleNotification.Response {
        let n = try await apple.notification(jws)
        guard let info = n.data?.signedTransactionInfo else {
            throw ServiceError(.validationFailed, "notification \(n.notificationType) carries no signedTransactionInfo")
        }
        let t = try await apple.transaction(info)
        let renewal = try await n.data?.signedRenewalInfo.asyncMap { try await apple.renewal($0) }
        let result: String = try await store.outbox.transaction { c in
            guard try await store.firstTime(n.notificationUUID, store: "apple", type: n.notificationType, on: c) else { return "duplicate" }
            let existing = try await store.lock("apple:\(t.originalTransactionId)", on: c)
            guard let user = existing?.0.uid ?? t.appAccountToken?.lowercased() else {
                try await store.noteResult(n.notificationUUID, "unknown-subscription", on: c)
                return "unknown-subscription"
            }
            let eventAt = n.signedDate.msDate
            let held = existing.map { SubscriptionRules.AppleHeld(state: $0.0.state, gracePeriodExpiresAt: $0.0.gracePeriodExpiresAt,
                                                                  autoRenewing: $0.0.autoRenewing, cancelledAt: $0.0.cancelledAt) }
            let change = SubscriptionRules.appleNotification(
                type: n.notificationType, subtype: n.subtype, held: held, renewalAutoRenews: renewal?.autoRenewStatus.map { $0 == 1 },
                renewalGraceEnds: renewal?.gracePeriodExpiresDate?.msDate, transactionExpires: t.expiresDate?.msDate, appleGrace: appleGrace,
                at: eventAt)
            let u = try appleUpdate(t, user: user, state: change.state, graceExpires: change.gracePeriodExpiresAt,
                                    autoRenewing: change.autoRenewing, cancelledAt: change.cancelledAt, eventAt: eventAt)
            let applied = try await store.apply(u, reason: Self.reason(n.notificationType), on: c)
            let result = applied ? "applied" : "stale"
            try await store.noteResult(n.notificationUUID, result, on: c)
            return result
        }
        logger.info("app store notification", metadata: ["type": "\(n.notificationType)", "subtype": "\(n.subtype ?? "-")", "result": "\(result)"])
        return .init(result: result)
    }

    /// A purchase recorded for one account is not moved to another by sending its signed
    /// transaction or purchase token (both travel through devices and logs): 403 `CA007`. A
    /// deleted account's purchases (kept under a `deleted-` name) may be restored by a new one.
    ///
    /// The purchase's id is locked first (`pg_advisory_xact_lock`), so the first claim of a
    /// purchase nobody holds yet is the only one: a concurrent claim waits for it to commit,
    /// then finds the row and is refused; it never overwrites the owner.
    func ensureNotAnothers(_ id: String, user: String, on c: PostgresConnection) async throws {
        try await c.lockUntilCommit("subscription:" + id, logger: logger)
        if let (existing, _) = try await store.lock(id, on: c), existing.uid != user, !existing.uid.hasPrefix("deleted-") {
            throw ServiceError(.permissionDenied, "this purchase belongs to another account")
        }
    }

    static func reason(_ type: String) -> String {
        switch type {
        case "DID_RENEW", "SUBSCRIBED": "renewal"
        case "DID_FAIL_TO_RENEW": "grace"
        case "REFUND", "REVOKE": "revoked"
        case "EXPIRED", "GRACE_PERIOD_EXPIRED": "expired"
        default: "store"
        }
    }

    // MARK: Google Play

    /// Compares two secrets in time independent of where they differ (SHA-256 of each, then
    /// every byte XORed): the push token cannot be guessed a byte at a time.
    static func sameSecret(_ given: String?, _ expected: String) -> Bool {
        guard let given else { return false }
        let a = SHA256.hash(data: Data(given.utf8)), b = SHA256.hash(data: Data(expected.utf8))
        var diff: UInt8 = 0
        for (x, y) in zip(a, b) { diff |= x ^ y }
        return diff == 0
    }

    func googleUpdate(_ p: PlayClient.Purchase, token: String, productId: String, user: String, eventAt: Date) throws -> SubscriptionStore.Update {
        let (state, grace) = SubscriptionRules.googleState(p.state, expiry: p.expiry, now: Date(), googleGrace: googleGrace)
        let product = p.productId ?? productId
        return .init(id: "google:\(token)", userId: user, platform: .android, productId: product, tier: try tier(product), state: state,
                     originalTransactionId: token, start: p.start, expiry: p.expiry, graceExpires: grace, autoRenewing: p.autoRenewing,
                     cancelledAt: p.cancelled ? eventAt : nil, eventAt: eventAt)
    }

    func requirePlay() throws -> PlayClient {
        guard let play else { throw ServiceError(.serviceUnavailable, "Google Play is not configured (CHRONIR_PLAY_CREDENTIALS_FILE)") }
        return play
    }

    /// `POST /v1/subscriptions/google`: verified with the Play Developer API.
    func googlePurchase(_ req: BillingMethods.Google.Request, user: String, reason: String) async throws -> Entitlement {
        guard !req.purchaseToken.isEmpty, req.purchaseToken.count < 4096 else { throw ServiceError(.validationFailed, "purchaseToken is required") }
        _ = try tier(req.productId)
        let p = try await requirePlay().subscription(token: req.purchaseToken)
        if let id = p.productId, id != req.productId { throw ServiceError(.receiptInvalid, "the purchase is for \(id), not \(req.productId)") }
        let u = try googleUpdate(p, token: req.purchaseToken, productId: req.productId, user: user, eventAt: Date())
        let e: Entitlement = try await store.outbox.transaction { c in
            try await ensureNotAnothers(u.id, user: user, on: c)
            try await store.apply(u, reason: reason, on: c)
            return try await store.resolve(user, reason: reason, on: c)
        }
        return e
    }

    /// `POST /v1/webhooks/google`: a Pub/Sub push of a Real-time Developer Notification. The
    /// state is read from the Play API; ordered by `eventTimeMillis`, idempotent by message id.
    func googleNotification(_ req: BillingMethods.GoogleNotification.Request) async throws -> BillingMethods.AppleNotification.Response {
        guard let expected = googlePushToken, Self.sameSecret(req.token, expected) else {
            throw ServiceError(.authRequired, "the push endpoint token is missing or wrong")
        }
        guard let message = req.body["message"], let id = message["messageId"]?.stringValue ?? message["message_id"]?.stringValue,
              let data = message["data"]?.stringValue, let decoded = Data(base64Encoded: data),
              let rtdn = try? JSONCoding.decoder().decode(JSONValue.self, from: decoded) else {
            throw ServiceError(.validationFailed, "not a Pub/Sub push message with base64 data")
        }
        guard let sub = rtdn["subscriptionNotification"], let token = sub["purchaseToken"]?.stringValue else {
            if rtdn["testNotification"] != nil { return .init(result: "applied") }
            throw ServiceError(.validationFailed, "the notification carries no subscriptionNotification")
        }
        let eventAt = (rtdn["eventTimeMillis"]?.stringValue.flatMap(Int64.init) ?? rtdn["eventTimeMillis"]?.intValue.map(Int64.init))?.msDate ?? Date()
        let p = try await requirePlay().subscription(token: token)
        let result: String = try await store.outbox.transaction { c in
            guard try await store.firstTime("google:\(id)", store: "google", type: sub["notificationType"]?.intValue.map(String.init) ?? "?", on: c) else {
                return "duplicate"
            }
            guard let existing = try await store.lock("google:\(token)", on: c) else {
                try await store.noteResult("google:\(id)", "unknown-subscription", on: c)
                return "unknown-subscription"
            }
            let u = try googleUpdate(p, token: token, productId: existing.0.productId, user: existing.0.uid, eventAt: eventAt)
            let applied = try await store.apply(u, reason: u.state == .active ? "renewal" : u.state.rawValue, on: c)
            try await store.noteResult("google:\(id)", applied ? "applied" : "stale", on: c)
            return applied ? "applied" : "stale"
        }
        return .init(result: result)
    }
}
