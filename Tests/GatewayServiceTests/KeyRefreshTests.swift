import Contracts
import Foundation
@testable import GatewayService
import Messaging
import ServiceKit
import Support
@testable import SuiteSupport
import Testing

extension DenialOfServiceTests {
    /// A token verifier of its own, talking to the suite's accounts service as the gateway does.
    private func withVerifier(_ s: TestSuite, failureRefreshInterval: Duration,
                              _ body: (TokenVerifier) async throws -> Void) async throws {
        let context = try TestBusKeys.context("gateway")
        let accounts = try RPCClient(context: context, target: "accounts", endpoints: ["tcp://127.0.0.1:\(s.ports[.accounts]!.rpc)"],
                                     source: "tests/1", telemetry: .discarding())
        let verifier = TokenVerifier(accounts: accounts, revocations: RevocationList(accounts: accounts, accessTTL: .seconds(3600)),
                                     logger: Telemetry.discarding().logger, failureRefreshInterval: failureRefreshInterval)
        do {
            try await body(verifier)
        } catch {
            await accounts.close()
            context.terminate()
            throw error
        }
        await accounts.close()
        context.terminate()
    }

    @Test("50 tokens that fail verification fetch the signing keys from accounts at most once per interval (accounts.keys); good tokens still pass")
    func keyRefreshStorm() async throws {
        try await withSuite { s in
            let u = try await s.signup("Keyholder", verified: false)
            try await withVerifier(s, failureRefreshInterval: .seconds(10)) { verifier in
                // No keys yet: the first token loads them.
                let caller = try await verifier.verify(authorization: "Bearer \(u.token)")
                #expect(caller.uid == u.uid)
                #expect(verifier.keyFetches == 1)
                // A flood of garbage, all at once: each is refused, and together they fetch the keys once.
                let refusals = await withTaskGroup(of: String?.self) { group in
                    for i in 0..<50 {
                        group.addTask {
                            do {
                                _ = try await verifier.verify(authorization: "Bearer garbage.\(i).\(UUID().uuidString)")
                                return nil
                            } catch let error as ServiceError {
                                return error.code.rawValue
                            } catch {
                                return "\(error)"
                            }
                        }
                    }
                    var codes: [String?] = []
                    for await code in group { codes.append(code) }
                    return codes
                }
                #expect(refusals.count == 50)
                #expect(refusals.allSatisfy { $0 == "CA012" }, "\(refusals)")
                #expect(verifier.keyFetches <= 2, "\(verifier.keyFetches) key fetches for 50 bad tokens")
                // The good token still passes.
                #expect(try await verifier.verify(authorization: "Bearer \(u.token)").uid == u.uid)
            }
        }
    }

    @Test("after the interval a bad token may fetch the keys again (a key rotated in meanwhile is picked up)")
    func keyRefreshAfterInterval() async throws {
        try await withSuite { s in
            let u = try await s.signup("Rotator", verified: false)
            try await withVerifier(s, failureRefreshInterval: .seconds(1)) { verifier in
                _ = try await verifier.verify(authorization: "Bearer \(u.token)")
                _ = try? await verifier.verify(authorization: "Bearer garbage.1")
                _ = try? await verifier.verify(authorization: "Bearer garbage.2")
                #expect(verifier.keyFetches == 2)
                try await Task.sleep(for: .milliseconds(1_100))
                _ = try? await verifier.verify(authorization: "Bearer garbage.3")
                #expect(verifier.keyFetches == 3)
            }
        }
    }

    @Test("tokens signed with a key rotated in, arriving together, share one key fetch and all pass (none refused while it runs)")
    func keyRefreshCoalesced() async throws {
        try await withSuite { s in
            let u = try await s.signup("Coalescer", verified: false)
            try await withVerifier(s, failureRefreshInterval: .seconds(1)) { verifier in
                _ = try await verifier.verify(authorization: "Bearer \(u.token)")
                #expect(verifier.keyFetches == 1)
                // A bad token fetches the keys; its interval then passes.
                _ = try? await verifier.verify(authorization: "Bearer garbage.1")
                #expect(verifier.keyFetches == 2)
                try await Task.sleep(for: .milliseconds(1_100))
                // A key the verifier has never seen signs the next sign-in's token.
                let rotation = try await s.rpc(.accounts, AccountsMethods.RotateSigningKey.self, Empty())
                let login = try await s.request(.POST, "/v1/auth/login", json: ["email": u.email, "password": "correct horse"])
                let fresh = try #require(login.json["accessToken"]?.stringValue, "\(login.status) \(login.text)")
                #expect(rotation.previousKid != nil)
                // 20 requests with it at once: one fetch, the others wait for it; none refused.
                let results = await withTaskGroup(of: String?.self) { group in
                    for _ in 0..<20 {
                        group.addTask {
                            do {
                                return try await verifier.verify(authorization: "Bearer \(fresh)").uid
                            } catch {
                                return "\(error)"
                            }
                        }
                    }
                    var all: [String?] = []
                    for await r in group { all.append(r) }
                    return all
                }
                #expect(results.count == 20 && results.allSatisfy { $0 == u.uid }, "\(results)")
                #expect(verifier.keyFetches == 3, "\(verifier.keyFetches) key fetches")
                // The old key still verifies.
                #expect(try await verifier.verify(authorization: "Bearer \(u.token)").uid == u.uid)
            }
        }
    }
}
