import AccountsService
import AlarmsService
import Contracts
import Foundation
import Messaging
import ServiceKit
import Support
import Synchronization
import ZMQ
@testable import SuiteSupport
import Testing

/// The bus policy on the real services: a service's key calling an operator method (the tier
/// changes) is refused with CA030 and nothing changes; the read-only status methods answer the
/// gateway and the operator but not another service.
@Suite("Bus policy on the running services")
struct BusPolicyTests {
    /// Calls `M` on `service` with `principal`'s key; the error code, or nil when it was answered.
    func refusal<M: RPCMethod>(_ s: TestSuite, as principal: String, _ service: ServiceDirectory.Name, _ method: M.Type,
                               _ request: M.Request) async throws -> ErrorCode? {
        let context = try TestBusKeys.context(principal)
        let client = try RPCClient(context: context, target: service.rawValue, endpoints: ["tcp://127.0.0.1:\(s.ports[service]!.rpc)"],
                                   source: "tests/1", telemetry: .discarding())
        defer { context.terminate() }
        do {
            _ = try await client.call(method, request, timeout: .seconds(5))
            await client.close()
            return nil
        } catch let error as ServiceError {
            await client.close()
            return error.code
        }
    }

    @Test("a service key cannot change a tier (CA030, the tier stays); the operator key can; status reads admit only the operator and the gateway")
    func serviceKeysCannotActAsOperator() async throws {
        try await withTestSuite(label: "buspolicy", start: { s in try s.startCore() }) { s in
            let u = try await s.signup("Victim")
            for principal in ["billing", "notifications", "gateway"] {
                #expect(try await refusal(s, as: principal, .accounts, AccountsMethods.SetTier.self, .init(userId: u.uid, tier: .premium)) == .callerNotAllowed)
                #expect(try await refusal(s, as: principal, .alarms, AlarmsMethods.SetTier.self, .init(userId: u.uid, tier: "premium")) == .callerNotAllowed)
            }
            // Every consumer caught up with its producer: a change that slipped through would show now.
            await s.settle()
            #expect(try await s.request(.GET, "/v1/me", token: u.token).json["tier"]?.stringValue == "free")
            let alarmsTier = try await s.inDatabase("alarms") {
                try await $0.query("SELECT tier FROM user_tiers WHERE user_id = \(u.uid)").first(String.self)
            }
            #expect(alarmsTier == nil || alarmsTier == "free", "alarms holds tier \(String(describing: alarmsTier))")
            // The read-only state of the suite: the gateway (for /v1/ops/status) and the operator.
            #expect(try await refusal(s, as: "gateway", .alarms, SystemMethods.Streams.self, Empty()) == nil)
            #expect(try await refusal(s, as: "operator", .alarms, SystemMethods.Streams.self, Empty()) == nil)
            #expect(try await refusal(s, as: "billing", .alarms, SystemMethods.Streams.self, Empty()) == .callerNotAllowed)
            let streams = try await s.rpc(.alarms, SystemMethods.Streams.self, Empty())
            #expect(streams.service == "alarms" && streams.produced["alarms"] != nil && (streams.consumed["accounts"] ?? 0) >= 1, "\(streams)")
            // The operator's key does change it.
            _ = try await s.setTier(u, "premium")
            #expect(await eventually { (try? await s.request(.GET, "/v1/me", token: u.token))?.json["tier"]?.stringValue == "premium" })
        }
    }

    /// Every principal on the bus.
    static let principals = ["gateway", "operator", "accounts", "alarms", "scheduler", "notifications", "invitations", "billing"]

    /// Principal × method: who may call each method services call of each other, and a sample of
    /// the rest (the default: the gateway and the operator). The one table of
    /// `docs/architecture.md` § Trust boundary, as code.
    static let table: [(type: String, access: MethodAccess, allowed: Set<String>)] = [
        (GroupMethods.AddMember.type, GroupMethods.AddMember.access, ["invitations"]),
        (GroupMethods.Membership.type, GroupMethods.Membership.access, ["gateway", "operator", "invitations", "alarms"]),
        (AccountsMethods.GetMe.type, AccountsMethods.GetMe.access, ["gateway", "operator", "invitations"]),
        (AlarmsMethods.Get.type, AlarmsMethods.Get.access, ["gateway", "operator", "invitations", "billing"]),
        (BillingMethods.SnoozeAllowance.type, BillingMethods.SnoozeAllowance.access, ["gateway", "operator", "alarms"]),
        (EventMethods.Replay.type, EventMethods.Replay.access, Set(principals)),  // and then per stream: StreamReaders
        (SystemMethods.Health.type, SystemMethods.Health.access, Set(principals)),
        (SystemMethods.Streams.type, SystemMethods.Streams.access, ["gateway", "operator"]),
        (AccountsMethods.SetTier.type, AccountsMethods.SetTier.access, ["operator"]),
        (AlarmsMethods.Delete.type, AlarmsMethods.Delete.access, ["gateway", "operator"]),
        (AccountsMethods.DeleteMe.type, AccountsMethods.DeleteMe.access, ["gateway", "operator"]),
        (InvitationsMethods.Accept.type, InvitationsMethods.Accept.access, ["gateway", "operator"]),
        (NotificationsMethods.Inbox.type, NotificationsMethods.Inbox.access, ["gateway", "operator"]),
    ]

    /// Principal × method acting for a user: only the gateway for anything; invitations and
    /// billing for the reads they make as the user.
    static let actingTable: [(type: String, allowed: Set<String>)] = [
        (AccountsMethods.GetMe.type, ["gateway", "invitations"]),
        (AlarmsMethods.Get.type, ["gateway", "invitations", "billing"]),
        (GroupMethods.AddMember.type, ["gateway"]),
        (AlarmsMethods.Delete.type, ["gateway"]),
    ]

    @Test("least privilege, principal × method: each principal may call only the methods the table gives it, and act for a user only where listed")
    func principalByMethod() {
        for row in Self.table {
            for principal in Self.principals {
                let refusal = BusPolicy.refusal(type: row.type, access: row.access, actor: nil, caller: principal, secured: true)
                #expect((refusal == nil) == row.allowed.contains(principal), "\(principal) → \(row.type): \(refusal ?? "allowed")")
            }
        }
        for row in Self.actingTable {
            for principal in Self.principals {
                let refusal = BusPolicy.refusal(type: row.type, access: .services, actor: "u1", caller: principal, secured: true)
                #expect((refusal == nil) == row.allowed.contains(principal), "\(principal) → \(row.type) for a user: \(refusal ?? "allowed")")
            }
        }
    }

    @Test("on the running accounts service, accounts.groups.add-member answers only the invitations key: every other service key (and the gateway's) gets CA030 and joins nobody")
    func addMemberOnlyFromInvitations() async throws {
        try await withTestSuite(label: "addmember", start: { s in try s.startCore() }) { s in
            let owner = try await s.signup("Owner")
            _ = try await s.setTier(owner, "premium")
            let g = try await s.request(.POST, "/v1/groups", token: owner.token, json: ["name": "Home", "iconName": "house"])
            let group = try #require(g.json["id"]?.stringValue, "\(g.text)")
            let intruder = try await s.signup("Intruder")
            for principal in Self.principals where principal != "invitations" {
                let code = try await refusal(s, as: principal, .accounts, GroupMethods.AddMember.self,
                                             .init(groupId: group, uid: intruder.uid, invitedBy: owner.uid))
                #expect(code == .callerNotAllowed, "\(principal): \(String(describing: code))")
            }
            let members = try await s.request(.GET, "/v1/groups/\(group)", token: owner.token)
            #expect(members.status == 200 && !members.text.contains(intruder.uid), "\(members.text)")
            #expect(try await refusal(s, as: "invitations", .accounts, GroupMethods.AddMember.self,
                                      .init(groupId: group, uid: intruder.uid, invitedBy: owner.uid)) == nil)
        }
    }

    @Test("stream readers: a key that does not consume a stream can neither replay it (CA030) nor subscribe to it (its CURVE handshake is refused); its consumers and the operator can")
    func streamReaders() async throws {
        try await withTestSuite(label: "readers", start: { s in try s.startCore() }) { s in
            _ = try await s.signup("Someone")
            let replay = EventMethods.Replay.Request(stream: "accounts", after: 0, limit: 10)
            #expect(try await refusal(s, as: "scheduler", .accounts, EventMethods.Replay.self, replay) == .callerNotAllowed)
            #expect(try await refusal(s, as: "billing", .alarms, EventMethods.Replay.self, .init(stream: "alarms", after: 0, limit: 10)) == .callerNotAllowed)
            #expect(try await refusal(s, as: "billing", .accounts, EventMethods.Replay.self, replay) == nil)
            #expect(try await refusal(s, as: "operator", .accounts, EventMethods.Replay.self, replay) == nil)

            // Subscribers of three keys on accounts' PUB socket, which heartbeats every second.
            let counts = MessageCounts()
            var open: [(ZMQContext, SocketActor, Task<Void, Never>)] = []
            for principal in ["billing", "scheduler", "operator"] {
                let context = try TestBusKeys.context(principal)
                var options = SocketOptions(type: .sub)
                options.connects = ["tcp://127.0.0.1:\(s.ports[.accounts]!.pub)"]
                options.subscriptions = [Data("accounts".utf8)]
                options.curve = .client(server: "accounts")
                let socket = try SocketActor(context: context, options: options, name: principal)
                let reader = Task { for await _ in socket.messages { counts.add(principal) } }
                open.append((context, socket, reader))
            }
            for i in 0..<8 {
                _ = try await s.signup("Later\(i)")
                try await Task.sleep(for: .milliseconds(400))
            }
            let seen = counts.snapshot
            #expect((seen["billing"] ?? 0) > 0 && (seen["operator"] ?? 0) > 0, "\(seen)")
            #expect(seen["scheduler"] == nil, "a key that does not read accounts received \(seen["scheduler"] ?? 0) messages of it")
            for (context, socket, reader) in open {
                await socket.close()
                await reader.value
                context.terminate()
            }
        }
    }
}

/// Messages received per subscriber, from the readers' tasks.
final class MessageCounts: Sendable {
    private let counts = Mutex<[String: Int]>([:])
    func add(_ name: String) { counts.withLock { $0[name, default: 0] += 1 } }
    var snapshot: [String: Int] { counts.withLock { $0 } }
}
