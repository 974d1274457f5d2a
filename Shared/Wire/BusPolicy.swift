/// Who may call a method on a CURVE-secured bus (the caller is the principal the ZAP handler
/// accepted for the connection; on a plain bus nothing is checked).
public enum MethodAccess: Sendable, Equatable {
    /// Any trusted principal (every service and the operator).
    case services
    /// Only the operator key (`chronirctl`): `*.admin.*`, tier changes, scheduler commands.
    case operatorOnly
    /// Only these principals (e.g. `events.push` only from the stream's producer).
    case principals(Set<String>)
}

/// The rules every ``RPCServer`` applies to the caller of each request on a secured bus.
///
/// 1. A request carrying a user `actor` must come from a principal that acts for users:
///    the gateway, and the services named in ``actingForUsers`` (the table of
///    `docs/architecture.md` § Trust boundary).
/// 2. A method's ``MethodAccess`` must admit the caller.
/// A refused request is answered `CA030 CALLER_NOT_ALLOWED` and changes nothing.
public enum BusPolicy {
    /// The principal of `chronirctl` and other operator tools.
    public static let operatorPrincipal = "operator"

    /// The principals that may send a request on behalf of a user, and why.
    public static let actingForUsers: [String: String] = [
        "gateway": "every public API request, as the signed-in user",
        "invitations": "reads the inviter's profile (accounts.me.get) and the invited alarm (alarms.get) as the inviter",
        "billing": "reads the snoozed alarm (alarms.get) as the user who buys a paid snooze",
    ]

    /// Why `caller` may not send a request of `type` with `actor`, or nil when it may.
    /// `secured`: the bus uses CURVE (a nil caller is then refused, never trusted).
    public static func refusal(type: String, access: MethodAccess, actor: String?, caller: String?, secured: Bool) -> String? {
        guard secured else { return nil }
        guard let caller, !caller.isEmpty else { return "the caller of \(type) is not authenticated" }
        if let actor, !actor.isEmpty, actingForUsers[caller] == nil {
            return "\(caller) may not act for a user (\(type))"
        }
        switch access {
        case .services:
            return nil
        case .operatorOnly:
            return caller == operatorPrincipal ? nil : "\(type) is for the operator only, not \(caller)"
        case .principals(let allowed):
            return allowed.contains(caller) ? nil : "\(type) is not accepted from \(caller)"
        }
    }
}
