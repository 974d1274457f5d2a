import Foundation

/// Which token-signing keys the gateway still trusts. The accounts service publishes its
/// current keys (`accounts.keys`); a key it stops publishing (retired) may still have signed
/// access tokens that are valid for up to their lifetime, so it is kept that long after it was
/// last seen published, then dropped: a retired key — leaked or not — stops being accepted.
public struct KeyRetirement: Sendable {
    /// How long a key stays trusted after it was last published: the longest access-token
    /// lifetime and a minute of clock skew (`CHRONIR_RETIRED_KEY_GRACE`, default 1 h 1 min).
    public let grace: TimeInterval
    public private(set) var lastPublished: [String: Date] = [:]

    public init(grace: TimeInterval) {
        self.grace = grace
    }

    /// Records the keys published at `now`; returns the kids to drop (unpublished for longer
    /// than ``grace``), forgetting them.
    public mutating func published(_ kids: Set<String>, at now: Date) -> [String] {
        for kid in kids { lastPublished[kid] = now }
        let stale = lastPublished.filter { !kids.contains($0.key) && now.timeIntervalSince($0.value) > grace }.map(\.key)
        for kid in stale { lastPublished[kid] = nil }
        return stale.sorted()
    }
}
