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

    /// Accounts' answer for `actor` in `group`, asked before the transaction (no call to another
    /// service is made inside one: it would hold the connection and the owner's row lock until
    /// accounts answers) and only when the copy does not list them there yet.
    struct Asked: Sendable {
        /// Accounts' answer (nil: it knows no such group), or the error it gave, which counts
        /// only if the transaction needs the answer; nil when accounts was not asked.
        var answer: Result<GroupMethods.Membership.Response?, ServiceError>?
    }

    /// Asks accounts about `actor` in `group` when the copy does not list them there; call it
    /// before the transaction that uses ``managedMembers(_:actor:asked:on:)``. An error is
    /// kept for the transaction, so the request's other checks still come first.
    func ask(_ group: String?, actor: String) async throws -> Asked {
        guard let group, try await !store.listsMember(group: group, user: actor) else { return Asked() }
        do {
            return Asked(answer: .success(try await accounts.call(GroupMethods.Membership.self, .init(groupId: group, uid: actor))))
        } catch let e as ServiceError where e.code == .notFound {
            return Asked(answer: .success(nil))
        } catch let e as ServiceError {
            return Asked(answer: .failure(e))
        }
    }

    /// The members of `group` when `actor` may add alarms to it under its rules (the owner,
    /// the owner and admins, or everyone: `GroupSettings.alarmEditors`); nil when they may not.
    /// From the copy when it lists `actor` in the group, else from what accounts said (`asked`).
    /// Takes the group's lock shared first (``AlarmStore/lockGroup(_:exclusive:on:)``): a
    /// membership change either comes before and is read here, or waits for this transaction
    /// and then finds the alarm it made to reshare.
    func managedMembers(_ group: String, actor: String, asked: Asked, on c: PostgresConnection) async throws -> [String]? {
        try await store.lockGroup(group, exclusive: false, on: c)
        if let allowed = try await store.mayEditGroupAlarms(group: group, user: actor, on: c) {
            return allowed ? try await store.groupMembers(group: group, on: c) : nil
        }
        // Listed when asked and gone since (removed a moment ago): not a member.
        guard let result = asked.answer, let answer = try result.get() else { return nil }
        guard let role = answer.role, (answer.group.settings ?? GroupSettings()).mayEditAlarms(role) else { return nil }
        return answer.group.memberIds
    }
}
