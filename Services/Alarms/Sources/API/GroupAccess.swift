import Contracts
import Messaging
import PostgresNIO

/// Who may add alarms to a group, and its members, as the alarms service sees them: its copy of
/// the accounts stream's groups, or accounts itself when that copy does not list the caller in
/// the group yet.
///
/// The copy lags the accounts stream by its delivery: a group made (or a member promoted) a
/// moment ago may not be in it. Asked then, the service refused the group's owner with
/// `CA007` and shared the alarm with no one until the group event came (a load run refused
/// 76–370 of 20 000 creations made 2–3 s after the groups). Accounts answers for that case
/// (`accounts.groups.membership`); a caller the copy already lists is answered from it.
struct GroupAccess: Sendable {
    let store: AlarmStore
    let accounts: RPCClient

    /// The members of `group` when `actor` may add alarms to it under its rules (the owner,
    /// the owner and admins, or everyone: `GroupSettings.alarmEditors`); nil when they may not.
    func managedMembers(_ group: String, actor: String, on c: PostgresConnection) async throws -> [String]? {
        if let allowed = try await store.mayEditGroupAlarms(group: group, user: actor, on: c) {
            return allowed ? try await store.groupMembers(group: group, on: c) : nil
        }
        let answer: GroupMethods.Membership.Response
        do {
            answer = try await accounts.call(GroupMethods.Membership.self, .init(groupId: group, uid: actor))
        } catch let e as ServiceError where e.code == .notFound {
            return nil
        }
        guard let role = answer.role, (answer.group.settings ?? GroupSettings()).mayEditAlarms(role) else { return nil }
        return answer.group.memberIds
    }
}
