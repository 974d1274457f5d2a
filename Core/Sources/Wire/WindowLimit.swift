import Foundation

/// At most `limit` actions in any `window` (alarm creations a minute, photo uploads a minute,
/// invitations an hour): the one rule of the per-window limits, counted over the actions of
/// the last window, which the caller reads from its store.
public struct WindowLimit: Sendable, Equatable {
    /// Actions allowed in one window.
    public var limit: Int
    /// The window's length, in seconds.
    public var window: TimeInterval

    public init(_ limit: Int, per window: TimeInterval) {
        self.limit = limit
        self.window = window
    }

    /// Nil while one more action fits, given `count` actions in the window that ends `now`, the
    /// oldest of them at `oldest`; else the whole seconds until that oldest one leaves the window
    /// (at least 1: a client told 0 would ask again at once).
    public func retryAfter(count: Int, oldest: Date?, now: Date) -> Int? {
        guard count >= limit else { return nil }
        let leaves = (oldest ?? now).addingTimeInterval(window).timeIntervalSince(now)
        return max(1, Int(leaves.rounded(.up)))
    }
}
