import Foundation
import Wire

/// A product of the stores (`chronir-api.md` §9.1).
public struct Product: Codable, Sendable, Equatable {
    public var iosProductId: String
    public var androidProductId: String
    public var tier: Tier
    /// `monthly` or `annual`.
    public var period: String
    public var priceUSD: Double
    /// Saving of the annual price against twelve monthly ones, in percent (annual products).
    public var annualSavingsPercent: Int?

    public init(iosProductId: String, androidProductId: String, tier: Tier, period: String, priceUSD: Double, annualSavingsPercent: Int?) {
        self.iosProductId = iosProductId
        self.androidProductId = androidProductId
        self.tier = tier
        self.period = period
        self.priceUSD = priceUSD
        self.annualSavingsPercent = annualSavingsPercent
    }
}

/// What a tier gives (technical spec §7), for a paywall.
public struct TierFeatures: Codable, Sendable, Equatable {
    public var tier: Tier
    public var activeAlarmLimit: Int?
    public var snoozeMinutes: [Int]
    public var preAlarmOffsets: [String]
    public var sharing: Bool
    public var groups: Bool
    public var features: [String]

    public init(tier: Tier, activeAlarmLimit: Int?, snoozeMinutes: [Int], preAlarmOffsets: [String], sharing: Bool, groups: Bool, features: [String]) {
        self.tier = tier
        self.activeAlarmLimit = activeAlarmLimit
        self.snoozeMinutes = snoozeMinutes
        self.preAlarmOffsets = preAlarmOffsets
        self.sharing = sharing
        self.groups = groups
        self.features = features
    }
}

/// A user's subscription at one store (`chronir-api.md` §3.7).
public struct Subscription: Codable, Sendable, Equatable {
    public var id: String
    public var uid: String
    public var platform: StorePlatform
    public var productId: String
    public var tier: Tier
    /// `active`, `grace`, `billing_retry`, `expired`, `revoked` (``SubscriptionState``).
    public var state: SubscriptionState
    public var originalTransactionId: String
    public var startDate: Date?
    public var expiryDate: Date?
    public var gracePeriodExpiresAt: Date?
    public var autoRenewing: Bool
    public var cancelledAt: Date?
    public var updatedAt: Date

    public init(id: String, uid: String, platform: StorePlatform, productId: String, tier: Tier, state: SubscriptionState, originalTransactionId: String,
                startDate: Date?, expiryDate: Date?, gracePeriodExpiresAt: Date?, autoRenewing: Bool, cancelledAt: Date?, updatedAt: Date) {
        self.id = id
        self.uid = uid
        self.platform = platform
        self.productId = productId
        self.tier = tier
        self.state = state
        self.originalTransactionId = originalTransactionId
        self.startDate = startDate
        self.expiryDate = expiryDate
        self.gracePeriodExpiresAt = gracePeriodExpiresAt
        self.autoRenewing = autoRenewing
        self.cancelledAt = cancelledAt
        self.updatedAt = updatedAt
    }
}

/// `GET /v1/entitlements` (§9.3): the resolved tier.
public struct Entitlement: Codable, Sendable, Equatable {
    public var tier: Tier
    /// When this tier ends unless renewed (the end of the grace period while in grace).
    public var expiresAt: Date?
    /// `active`, `grace` or `none`.
    public var state: String
    public var subscriptions: [Subscription]

    public init(tier: Tier, expiresAt: Date?, state: String, subscriptions: [Subscription]) {
        self.tier = tier
        self.expiresAt = expiresAt
        self.state = state
        self.subscriptions = subscriptions
    }
}

/// Requests the billing service answers.
public enum BillingMethods {
    public struct Products: RPCMethod {
        public typealias Request = Empty
        public struct Response: Codable, Sendable {
            public var products: [Product]
            public var tiers: [TierFeatures]
            public init(products: [Product], tiers: [TierFeatures]) {
                self.products = products
                self.tiers = tiers
            }
        }
        public static let type = "billing.products"
    }

    public struct Entitlements: RPCMethod {
        public typealias Request = Empty
        public typealias Response = Entitlement
        public static let type = "billing.entitlements"
    }

    /// `POST /v1/subscriptions/apple {signedTransaction}`.
    public struct Apple: RPCMethod {
        public struct Request: Codable, Sendable {
            public var signedTransaction: String
            public init(signedTransaction: String) { self.signedTransaction = signedTransaction }
        }
        public typealias Response = Entitlement
        public static let type = "billing.apple.transaction"
    }

    /// `POST /v1/subscriptions/google {productId, purchaseToken}`.
    public struct Google: RPCMethod {
        public struct Request: Codable, Sendable {
            public var productId: String
            public var purchaseToken: String
            public init(productId: String, purchaseToken: String) {
                self.productId = productId
                self.purchaseToken = purchaseToken
            }
        }
        public typealias Response = Entitlement
        public static let type = "billing.google.purchase"
    }

    /// `POST /v1/subscriptions/restore`: re-verifies what the device holds.
    public struct Restore: RPCMethod {
        public struct Request: Codable, Sendable {
            public var signedTransactions: [String]?
            public var purchases: [Google.Request]?
            public init(signedTransactions: [String]?, purchases: [Google.Request]?) {
                self.signedTransactions = signedTransactions
                self.purchases = purchases
            }
        }
        public typealias Response = Entitlement
        public static let type = "billing.restore"
    }

    /// `POST /v1/webhooks/apple {signedPayload}` (App Store Server Notifications V2).
    public struct AppleNotification: RPCMethod {
        public struct Request: Codable, Sendable {
            public var signedPayload: String
            public init(signedPayload: String) { self.signedPayload = signedPayload }
        }
        public struct Response: Codable, Sendable {
            /// `applied`, `duplicate`, `stale` (older than what is known) or `unknown-subscription`.
            public var result: String
            public init(result: String) { self.result = result }
        }
        public static let type = "billing.apple.notification"
    }

    /// `POST /v1/webhooks/google` (Real-time Developer Notifications, Pub/Sub push).
    public struct GoogleNotification: RPCMethod {
        public struct Request: Codable, Sendable {
            /// The push endpoint's shared secret (`?token=`).
            public var token: String?
            public var body: JSONValue
            public init(token: String?, body: JSONValue) {
                self.token = token
                self.body = body
            }
        }
        public typealias Response = AppleNotification.Response
        public static let type = "billing.google.notification"
    }
}

/// Events of the `billing` stream.
public enum BillingEvents {
    /// A user's resolved tier changed.
    public static let entitlementChanged = TypedEvent<EntitlementChanged>("billing.entitlement-changed")

    public struct EntitlementChanged: Codable, Sendable, Equatable {
        public var userId: String
        public var tier: Tier
        public var previousTier: Tier
        public var expiresAt: Date?
        /// `purchase`, `renewal`, `grace`, `expired`, `revoked`, `restore`.
        public var reason: String
        public init(userId: String, tier: Tier, previousTier: Tier, expiresAt: Date?, reason: String) {
            self.userId = userId
            self.tier = tier
            self.previousTier = previousTier
            self.expiresAt = expiresAt
            self.reason = reason
        }
    }
}

/// The charity paid snoozes go to ("Snooze If You Can": `Charity`), configured per deployment.
public struct Charity: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var description: String?
    public var category: String?
    public var websiteURL: String?
    public init(id: String, name: String, description: String? = nil, category: String? = nil, websiteURL: String? = nil) {
        self.id = id
        self.name = name
        self.description = description
        self.category = category
        self.websiteURL = websiteURL
    }
}

/// One paid snooze of the accountability policy.
public struct SnoozeLedgerEntry: Codable, Sendable, Equatable {
    public var transactionId: String
    public var alarmId: String
    public var occurrenceAt: Date
    /// 1–5: the paid snooze's rank for this occurrence (its price escalates with it).
    public var sequence: Int
    public var amountCents: Int
    public var productId: String
    public var purchasedAt: Date

    public init(transactionId: String, alarmId: String, occurrenceAt: Date, sequence: Int, amountCents: Int, productId: String, purchasedAt: Date) {
        self.transactionId = transactionId
        self.alarmId = alarmId
        self.occurrenceAt = occurrenceAt
        self.sequence = sequence
        self.amountCents = amountCents
        self.productId = productId
        self.purchasedAt = purchasedAt
    }
}

/// `GET /v1/me/snooze-ledger`: what snoozing cost, and the streaks without it.
public struct SnoozeLedger: Codable, Sendable, Equatable {
    public var entries: [SnoozeLedgerEntry]
    public var totalCents: Int
    public var totalSnoozes: Int
    /// Whole days since the last paid snooze (0 when it was today).
    public var currentStreakDays: Int
    /// The longest run of whole days without a paid snooze.
    public var longestStreakDays: Int
    /// Paid snoozes this week (ISO week, from Monday 00:00 UTC) and this calendar month (UTC):
    /// the "Snooze If You Can" dashboard's `currentWeekAmount` and `currentMonthAmount`.
    public var currentWeekCents: Int = 0
    public var currentWeekSnoozes: Int = 0
    public var currentMonthCents: Int = 0
    public var currentMonthSnoozes: Int = 0
    /// Where the money goes, as configured for this deployment; nil when none is.
    public var charity: Charity?

    public init(entries: [SnoozeLedgerEntry], totalCents: Int, totalSnoozes: Int, currentStreakDays: Int, longestStreakDays: Int) {
        self.entries = entries
        self.totalCents = totalCents
        self.totalSnoozes = totalSnoozes
        self.currentStreakDays = currentStreakDays
        self.longestStreakDays = longestStreakDays
    }
}

extension BillingMethods {
    public struct Ledger: RPCMethod {
        public typealias Request = Empty
        public typealias Response = SnoozeLedger
        public static let type = "billing.snooze-ledger"
    }

    /// `POST /v1/me/snooze-ledger {alarmId, occurrenceAt, signedTransaction}`: a paid snooze,
    /// bought as a store consumable (`com.chronir.snooze.<n>`, $n − 0.01).
    public struct PaidSnooze: RPCMethod {
        public struct Request: Codable, Sendable {
            public var alarmId: String
            public var occurrenceAt: Date
            /// iOS: the StoreKit 2 transaction (JWS).
            public var signedTransaction: String?
            /// Android: the Play purchase token of the `chronir_snooze_<n>` consumable.
            public var purchaseToken: String?
            public init(alarmId: String, occurrenceAt: Date, signedTransaction: String? = nil, purchaseToken: String? = nil) {
                self.alarmId = alarmId
                self.occurrenceAt = occurrenceAt
                self.signedTransaction = signedTransaction
                self.purchaseToken = purchaseToken
            }
        }
        public typealias Response = SnoozeLedgerEntry
        public static let type = "billing.snooze-ledger.record"
    }
}

/// An alarm's accountability snooze policy: the first `freeSnoozes` snoozes of an occurrence are
/// free, each further one is paid (escalating), 5 in all.
public struct SnoozePolicy: Codable, Sendable, Equatable {
    public var alarmId: String
    public var enabled: Bool
    public var freeSnoozes: Int
    public init(alarmId: String, enabled: Bool, freeSnoozes: Int) {
        self.alarmId = alarmId
        self.enabled = enabled
        self.freeSnoozes = freeSnoozes
    }
}

extension BillingMethods {
    /// `PUT /v1/alarms/{id}/snooze-policy {enabled, freeSnoozes}` (the alarm's owner).
    public struct PutSnoozePolicy: RPCMethod {
        public typealias Request = SnoozePolicy
        public typealias Response = SnoozePolicy
        public static let type = "billing.snooze-policy.put"
    }

    /// Internal (alarms, before a snooze): may `userId` take snooze number `snoozeNumber` of the occurrence?
    public struct SnoozeAllowance: RPCMethod {
        public struct Request: Codable, Sendable {
            public var alarmId: String
            public var occurrenceAt: Date
            public var userId: String
            public var snoozeNumber: Int
            public init(alarmId: String, occurrenceAt: Date, userId: String, snoozeNumber: Int) {
                self.alarmId = alarmId
                self.occurrenceAt = occurrenceAt
                self.userId = userId
                self.snoozeNumber = snoozeNumber
            }
        }
        public struct Response: Codable, Sendable {
            /// Whether the alarm has an accountability policy (otherwise the usual 3 free snoozes apply).
            public var policy: Bool
            public var maxSnoozes: Int
            public var allowed: Bool
            /// When payment is needed: its price and the consumable to buy.
            public var costCents: Int?
            public var productId: String?
            /// The same consumable on Google Play.
            public var androidProductId: String?
            public init(policy: Bool, maxSnoozes: Int, allowed: Bool, costCents: Int?, productId: String?, androidProductId: String? = nil) {
                self.androidProductId = androidProductId
                self.policy = policy
                self.maxSnoozes = maxSnoozes
                self.allowed = allowed
                self.costCents = costCents
                self.productId = productId
            }
        }
        public static let type = "billing.snooze-allowance"
        /// Alarms asks it before a snooze.
        public static let access = MethodAccess.edge(and: "alarms")
    }
}

extension BillingEvents: EventCatalogue {
    public static let stream = "billing"
    public static let all: [any EventType] = [entitlementChanged]
}
