import Foundation
import Messaging
import ServiceKit
import Support
@testable import SuiteSupport
import Testing
import ZMQ

/// `BusKeys` (`Shared/ServiceKit/Config/BusKeys.swift`) on a real service process: without bus
/// keys it refuses to start unless `CHRONIR_INSECURE_BUS=1`, and with that switch it starts and
/// serves anyone who reaches its ports, without CURVE.
@Suite("A service refuses to start without bus keys", .serialized)
struct BusKeysTests {
    /// The accounts service's environment in `s` with no bus keys at all (the test runner's own
    /// environment emptied too: an empty value counts as unset) and `extra` on top.
    func keyless(_ s: TestSuite, _ extra: [String: String]) -> [String: String] {
        s.environment(for: "accounts", extra: [
            "CHRONIR_BUS_KEYS": "", "CHRONIR_BUS_PUBLIC_KEYS": "", "CHRONIR_BUS_SECRET_KEY_FILE": "", "CHRONIR_INSECURE_BUS": "",
            "CHRONIR_LOG_LEVEL": "info",
        ].merging(extra) { $1 })
    }

    @Test("no keys: exits 2 naming CHRONIR_BUS_KEYS and CHRONIR_INSECURE_BUS; half the keys: exits 2; CHRONIR_INSECURE_BUS=1: starts, warns, answers a client without CURVE")
    func refusesWithoutKeys() async throws {
        try await withTestSuite(label: "buskeys", start: { _ in }) { s in
            // No keys, no switch (and the switch off): a configuration error before anything listens.
            for (label, extra) in [("nokeys", [String: String]()), ("insecure-off", ["CHRONIR_INSECURE_BUS": "0"])] {
                let refused = try TestProcess("accounts", environment: keyless(s, extra), label: "accounts-\(label)")
                let status = await refused.waitForExit(timeout: .seconds(30))
                #expect(status == 2, "\(label): exited \(String(describing: status)): \(refused.output.suffix(2000))")
                #expect(refused.output.contains("accounts: configuration error: no bus keys: set CHRONIR_BUS_KEYS"), "\(refused.output.suffix(2000))")
                #expect(refused.output.contains("CHRONIR_INSECURE_BUS=1 runs without CURVE"), "\(refused.output.suffix(2000))")
                if status == nil { refused.kill9() }
            }

            // Public keys without a secret key: refused as well.
            let half = try TestProcess("accounts", environment: keyless(s, ["CHRONIR_BUS_PUBLIC_KEYS": "\(TestBusKeys.directory)/public"]),
                                       label: "accounts-halfkeys")
            let halfStatus = await half.waitForExit(timeout: .seconds(30))
            #expect(halfStatus == 2, "exited \(String(describing: halfStatus)): \(half.output.suffix(2000))")
            #expect(half.output.contains("CHRONIR_BUS_PUBLIC_KEYS and CHRONIR_BUS_SECRET_KEY_FILE go together"), "\(half.output.suffix(2000))")
            if halfStatus == nil { half.kill9() }

            // The switch on: it starts, says so, and answers a plain (unauthenticated) client.
            let insecure = try TestProcess("accounts", environment: keyless(s, ["CHRONIR_INSECURE_BUS": "1"]), label: "accounts-insecure")
            #expect(await insecure.waitForOutput("INSECURE BUS: CHRONIR_INSECURE_BUS=1 and no keys"), "\(insecure.output.suffix(2000))")
            let plain = ZMQContext()
            let client = try RPCClient(context: plain, target: "accounts", endpoints: ["tcp://127.0.0.1:\(s.ports[.accounts]!.rpc)"],
                                       source: "tests/1", telemetry: .discarding(), defaultTimeout: .seconds(5))
            var report: HealthReport?
            let answered = await eventually(timeout: .seconds(60), every: .milliseconds(200)) {
                if insecure.exitStatus != nil { return true }
                report = try? await client.call(SystemMethods.Health.self, Empty(), timeout: .seconds(2))
                return report != nil
            }
            #expect(answered && report != nil, "the insecure service never answered: \(insecure.output.suffix(3000))")
            #expect(report?.service == "accounts")
            #expect(insecure.exitStatus == nil, "the insecure service exited: \(insecure.output.suffix(3000))")
            await client.close()
            plain.terminate()
            #expect(await insecure.terminate() == 0, "\(insecure.output.suffix(2000))")
        }
    }
}
