/// Who may call a method on a CURVE-secured bus (the caller is the principal the ZAP handler
/// accepted for the connection; on a plain bus nothing is checked).
public enum MethodAccess: Sendable, Equatable {
    /// Any trusted principal (every service and the operator).
    case services
    /// Only the operator key (`chronirctl`): `*.admin.*`, tier changes, scheduler commands.
    case operatorOnly
    /// Only these principals (e.g. `events.push` only from the stream's producer).
    case principals(Set<String>)

    /// The default of a method: the public edge (the gateway, which every API request passes)
    /// and the operator. A method another service calls names that service in its `access`.
    public static let edge = MethodAccess.principals([BusPolicy.gatewayPrincipal, BusPolicy.operatorPrincipal])

    /// The edge and the operator, and these services besides.
    public static func edge(and services: String...) -> MethodAccess {
        .principals(Set([BusPolicy.gatewayPrincipal, BusPolicy.operatorPrincipal] + services))
    }
}

/// The rules every ``RPCServer`` applies to the caller of each request on a secured bus.
///
/// 1. A request carrying a user `actor` must come from a principal that acts for users — the
///    gateway, and for the methods listed the services named in ``actingForUsers`` (the table
///    of `docs/architecture.md` § Trust boundary).
/// 2. A method's ``MethodAccess`` must admit the caller: by default (``MethodAccess/edge``)
///    only the gateway and the operator; the few methods services call of each other name
///    their callers (least privilege: a service's key reaches only what that service needs).
/// A refused request is answered `CA030 CALLER_NOT_ALLOWED` and changes nothing.
public enum BusPolicy {
    /// The principal of `chronirctl` and other operator tools.
    public static let operatorPrincipal = "operator"

    /// The principal of the public HTTP edge.
    public static let gatewayPrincipal = "gateway"

    /// The principals that may send a request on behalf of a user, and the methods they may send
    /// so (`*`: every method).
    public static let actingForUsers: [String: Set<String>] = [
        // Every public API request, as the signed-in user.
        gatewayPrincipal: ["*"],
        // Reads the inviter's profile and the invited alarm as the inviter.
        "invitations": ["accounts.me.get", "alarms.get"],
        // Reads the snoozed alarm as the user who buys a paid snooze.
        "billing": ["alarms.get"],
    ]

    /// Why `caller` may not send a request of `type` with `actor`, or nil when it may.
    /// `secured`: the bus uses CURVE (a nil caller is then refused, never trusted).
    public static func refusal(type: String, access: MethodAccess, actor: String?, caller: String?, secured: Bool) -> String? {
        guard secured else { return nil }
        guard let caller, !caller.isEmpty else { return "the caller of \(type) is not authenticated" }
        if let actor, !actor.isEmpty {
            guard let scope = actingForUsers[caller] else { return "\(caller) may not act for a user (\(type))" }
            guard scope.contains("*") || scope.contains(type) else { return "\(caller) may not send \(type) for a user" }
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
