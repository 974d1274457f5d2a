import AccountsService
import AlarmsService
import Contracts
import Foundation
import Messaging
import ServiceKit
import Support
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
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await s.request(.GET, "/v1/me", token: u.token).json["tier"]?.stringValue == "free")
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
}
