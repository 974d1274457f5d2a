import Foundation
import ServiceKit
import Testing

/// `CHRONIR_OUTBOX_NUMBER_AT_COMMIT`: whether a transaction's events are inserted numbered by
/// its last statement (on unless turned off; a bad value is a configuration error).
@Suite("CHRONIR_OUTBOX_NUMBER_AT_COMMIT")
struct OutboxNumberAtCommitSettingTests {
    @Test("on by default, off when set false, a clear error for anything else")
    func setting() async throws {
        let base = ["CHRONIR_INSECURE_BUS": "1", "CHRONIR_LOG_FORMAT": "text"]
        let byDefault = try ServiceRuntime(service: "settings-test", environment: ServiceEnvironment(base))
        #expect(byDefault.outboxNumbersAtCommit)
        await byDefault.shutdown()
        let off = try ServiceRuntime(service: "settings-test",
                                     environment: ServiceEnvironment(base.merging(["CHRONIR_OUTBOX_NUMBER_AT_COMMIT": "off"]) { $1 }))
        #expect(!off.outboxNumbersAtCommit)
        await off.shutdown()
        #expect(throws: ServiceEnvironment.Invalid.self) {
            _ = try ServiceRuntime(service: "settings-test",
                                   environment: ServiceEnvironment(base.merging(["CHRONIR_OUTBOX_NUMBER_AT_COMMIT": "later"]) { $1 }))
        }
    }
}
