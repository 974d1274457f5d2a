import Contracts

extension Alarm {
    /// Everyone who sees the alarm: the owner and its shared members.
    public var members: [String] { Self.members(owner: ownerId, sharedWith: sharedWith) }

    public static func members(owner: String, sharedWith: [String]) -> [String] { [owner] + sharedWith.filter { $0 != owner } }

    /// Whether `user` may read it (§11: owner or shared member).
    public func isVisible(to user: String) -> Bool { ownerId == user || sharedWith.contains(user) }
}
