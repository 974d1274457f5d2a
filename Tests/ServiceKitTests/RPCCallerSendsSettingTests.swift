import Foundation
import ServiceKit
import Testing

/// `CHRONIR_RPC_CALLER_SENDS`: whether RPC clients and servers send on the calling task's
/// thread when their socket is idle (on unless turned off; a bad value is a configuration error).
@Suite("CHRONIR_RPC_CALLER_SENDS")
struct RPCCallerSendsSettingTests {
    @Test("on by default, off when set false, a clear error for anything else")
    func setting() async throws {
        let base = ["CHRONIR_INSECURE_BUS": "1", "CHRONIR_LOG_FORMAT": "text"]
        let byDefault = try ServiceRuntime(service: "settings-test", environment: ServiceEnvironment(base))
        #expect(byDefault.rpcCallerSends)
        await byDefault.shutdown()
        let off = try ServiceRuntime(service: "settings-test",
                                     environment: ServiceEnvironment(base.merging(["CHRONIR_RPC_CALLER_SENDS": "false"]) { $1 }))
        #expect(!off.rpcCallerSends)
        await off.shutdown()
        #expect(throws: ServiceEnvironment.Invalid.self) {
            _ = try ServiceRuntime(service: "settings-test",
                                   environment: ServiceEnvironment(base.merging(["CHRONIR_RPC_CALLER_SENDS": "sometimes"]) { $1 }))
        }
    }
}
