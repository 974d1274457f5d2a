import Foundation

/// The order a batch's notifications are numbered in.
public enum DeliveryOrder {
    /// A batch's notifications in the order they get their inbox ids (and so go out on the live
    /// stream and into the push queue): fires and warnings due now first (their lead was lost:
    /// a takeover, an alarm set for the next seconds), then the rest due now (completion pushes,
    /// misses), then what waits for its instant. Stable within each rank. Nothing due now is
    /// numbered behind a waiting fire of the same batch, which the live stream would hold it
    /// behind until that fire's instant (it keeps each user's notifications in id order).
    ///
    /// Notifications that replace one another on a phone (one collapse key: a fire, then that
    /// occurrence's "Done" or "Missed") keep their stream order: each takes the most urgent rank
    /// of its key, so a stale "Done" is never numbered, and pushed, after the next ring.
    public static func urgentFirst<Context>(_ items: [(RenderedNotification, Context)], now: Date) -> [(RenderedNotification, Context)] {
        func rank(_ n: RenderedNotification) -> Int {
            if let at = n.deliverAt, at > now { return 2 }
            return n.content.type == "alarm_fired" || n.content.type == "pre_alarm" ? 0 : 1
        }
        var ranks = items.map { rank($0.0) }
        var byKey: [String: Int] = [:]
        for (i, item) in items.enumerated() {
            guard let key = item.0.content.collapseKey else { continue }
            byKey[key] = min(byKey[key] ?? .max, ranks[i])
        }
        for (i, item) in items.enumerated() {
            if let key = item.0.content.collapseKey, let r = byKey[key] { ranks[i] = r }
        }
        guard zip(ranks, ranks.dropFirst()).contains(where: { $0 > $1 }) else { return items }
        return items.indices.sorted { (ranks[$0], $0) < (ranks[$1], $1) }.map { items[$0] }
    }
}
