import Contracts
import Foundation
import Wire

/// A user's tier and, when it dropped because a subscription lapsed (its grace period over),
/// what it was: a refusal then says so (`CA013 SUBSCRIPTION_EXPIRED`) rather than offering an
/// upgrade (`CA002 TIER_REQUIRED`), as `chronir-api.md`'s error table distinguishes them.
public struct TierStanding: Sendable, Equatable {
    public var tier: Tier
    /// The tier the user had before their subscription expired, while they are below it.
    public var lapsedFrom: Tier?
    public var lapsedAt: Date?

    public init(tier: Tier, lapsedFrom: Tier? = nil, lapsedAt: Date? = nil) {
        self.tier = tier
        self.lapsedFrom = lapsedFrom.flatMap { $0 > tier ? $0 : nil }
        self.lapsedAt = lapsedAt
    }

    /// Refuses unless the tier is at least `needed`: `CA013` when a lapsed subscription of
    /// that tier is why, else `CA002`. `message`: the refusal ("notes need Plus").
    public func require(_ needed: Tier, _ message: String) throws {
        guard tier < needed else { return }
        var details: [String: JSONValue] = ["requiredTier": .string(needed.rawValue), "tier": .string(tier.rawValue)]
        if let lapsedFrom, lapsedFrom >= needed {
            let when = lapsedAt.map { " on \(ISOTime.format($0).prefix(10))" } ?? ""
            details["expiredTier"] = .string(lapsedFrom.rawValue)
            throw ServiceError(.subscriptionExpired,
                               "\(message): your \(lapsedFrom.rawValue.capitalized) subscription expired\(when); renew it to use this again",
                               details: .object(details))
        }
        throw ServiceError(.tierRequired, message, details: .object(details))
    }

    /// The standing after billing resolves `new` tier from `previous` for `reason`: an expiry, a
    /// refund's revocation or a renewal whose payment keeps failing (Google's "on hold") that
    /// lowers the tier remembers the tier lost; going up forgets it.
    public static func after(_ old: TierStanding, new: Tier, previous: Tier, reason: String, at now: Date) -> TierStanding {
        if new < previous, ["expired", "revoked", "billing_retry"].contains(reason) {
            return TierStanding(tier: new, lapsedFrom: max(previous, old.lapsedFrom ?? previous), lapsedAt: now)
        }
        if new >= (old.lapsedFrom ?? .free) { return TierStanding(tier: new) }
        return TierStanding(tier: new, lapsedFrom: old.lapsedFrom, lapsedAt: old.lapsedAt)
    }
}
