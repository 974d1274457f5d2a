import Contracts

/// Products and what each tier gives (`chronir-api.md` §9.1, technical spec §7).
public enum Catalog {
    public static let products: [Product] = [
        Product(iosProductId: "com.chronir.plus.monthly", androidProductId: "chronir_plus_monthly", tier: .plus, period: "monthly",
                priceUSD: 1.99, annualSavingsPercent: nil),
        Product(iosProductId: "com.chronir.plus.annual", androidProductId: "chronir_plus_annual", tier: .plus, period: "annual",
                priceUSD: 14.99, annualSavingsPercent: savings(monthly: 1.99, annual: 14.99)),
        Product(iosProductId: "com.chronir.premium.monthly", androidProductId: "chronir_premium_monthly", tier: .premium, period: "monthly",
                priceUSD: 3.99, annualSavingsPercent: nil),
        Product(iosProductId: "com.chronir.premium.annual", androidProductId: "chronir_premium_annual", tier: .premium, period: "annual",
                priceUSD: 29.99, annualSavingsPercent: savings(monthly: 3.99, annual: 29.99)),
    ]

    public static func savings(monthly: Double, annual: Double) -> Int {
        Int(((1 - annual / (monthly * 12)) * 100).rounded())
    }

    public static let tiers: [TierFeatures] = [
        TierFeatures(tier: .free, activeAlarmLimit: 2, snoozeMinutes: [10, 60], preAlarmOffsets: ["24h"], sharing: false, groups: false,
                     features: ["2 active alarms", "all recurrence types", "persistent full-screen alarms", "local completion history"]),
        TierFeatures(tier: .plus, activeAlarmLimit: nil, snoozeMinutes: [10, 60, 1440, 10080], preAlarmOffsets: ["7d", "3d", "1d", "1h"],
                     sharing: false, groups: false,
                     features: ["unlimited alarms", "custom snooze (1 day, 1 week)", "multiple pre-alarms", "photo attachments",
                                "completion history and streaks", "cloud backup"]),
        TierFeatures(tier: .premium, activeAlarmLimit: nil, snoozeMinutes: [10, 60, 1440, 10080], preAlarmOffsets: ["7d", "3d", "1d", "1h"],
                     sharing: true, groups: true,
                     features: ["everything in Plus", "shared alarms", "groups of up to 10", "completion notifications", "assignments"]),
    ]

    /// The tier of a store product id (either store's form).
    public static func tier(of productId: String) -> Tier? {
        products.first { $0.iosProductId == productId || $0.androidProductId == productId }?.tier
    }
}
