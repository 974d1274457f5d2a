import Contracts

/// The caller's address as the gateway forwarded it from the access token, and whether the
/// account proved it (a verification mail answered, or asserted by Apple or Google).
public struct CallerAddress: Sendable, Equatable {
    /// Normalized (``EmailKey/normalize(_:)``); nil when the token carried none.
    public var email: String?
    public var proven: Bool

    public init(email: String?, proven: Bool) {
        self.email = email
        self.proven = proven
    }

    /// Whether `invitee` (an invitation's address) is this caller's address; an empty one (a
    /// deleted invitee's) is nobody's.
    public func holds(_ invitee: String) -> Bool {
        guard let email, !email.isEmpty, !invitee.isEmpty else { return false }
        return EmailKey.normalize(invitee) == email
    }
}
