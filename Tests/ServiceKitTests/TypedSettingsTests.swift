import Foundation
import Support
import Testing

/// Each service reads its typed settings (`<S>Config`, a ``ServiceConfig``) before anything
/// connects: a malformed value stops the process at once with status 2 and the variable's name,
/// even while its database cannot be reached (before, it waited for the database and ran the
/// migrations first).
@Suite("Typed settings are read before anything connects")
struct TypedSettingsTests {
    @Test("a bad setting of each service stops it at once (status 2, the variable named) with the database unreachable")
    func badSettingStopsFirst() async throws {
        let unreachable = "postgres://nobody@127.0.0.1:\(freePort())/none"
        let cases = [
            ("accounts", "CHRONIR_SCRYPT_LOG_N", "99"),
            ("alarms", "CHRONIR_ALARM_CREATIONS_PER_MINUTE", "0"),
            ("scheduler", "CHRONIR_FIRE_LEAD", "301s"),
            ("notifications", "CHRONIR_DELIVERY_POLL", "soon"),
            ("invitations", "CHRONIR_INVITATIONS_PER_HOUR", "0"),
            ("billing", "CHRONIR_APPLE_GRACE", "soon"),
            ("gateway", "CHRONIR_HTTP_PORT", "70000"),
            // The shared replica settings (they became 1 without a word).
            ("alarms", "CHRONIR_REPLICAS", "two"),
            ("scheduler", "CHRONIR_REPLICA", "0"),
            ("notifications", "CHRONIR_NOTIFICATIONS_REPLICAS", "11"),
            // The shared settings of ``RuntimeConfig`` and the database's address (they were
            // read once the database answered, and exited 1).
            ("alarms", "CHRONIR_SHUTDOWN_GRACE", "soon"),
            ("accounts", "CHRONIR_DB_SCHEMA", "Bad-Name"),
            ("billing", "CHRONIR_DB_POOL_SIZE", "0"),
            ("invitations", "CHRONIR_DB_PROBE_TIMEOUT", "soon"),
            ("scheduler", "CHRONIR_OUTBOX_POLL", "soon"),
            ("notifications", "CHRONIR_RPC_CONCURRENCY", "0"),
            ("alarms", "CHRONIR_OPS_PORT", "70000"),
            ("accounts", "CHRONIR_EXPORT_PAGE_SIZE", "0"),
            ("billing", "CHRONIR_POISON_ATTEMPTS", "0"),
            ("invitations", "CHRONIR_FAILPOINT_KILL_BEFORE_CHECKPOINT", "accounts"),
            ("gateway", "CHRONIR_CONSUMER_SILENCE", "soon"),
        ]
        for (service, variable, value) in cases {
            let base = ["DATABASE_URL": unreachable, "CHRONIR_INSECURE_BUS": "1", "CHRONIR_OPS_PORT": "0",
                        "CHRONIR_LOG_FORMAT": "text"]
            let process = try TestProcess(service, environment: base.merging([variable: value]) { _, bad in bad },
                                          label: "settings-\(service)")
            let status = await process.waitForExit(timeout: .seconds(15))
            if status == nil { _ = await process.terminate() }
            #expect(status == 2, "\(service) with \(variable)=\(value): status \(String(describing: status)); \(process.output.suffix(600))")
            #expect(process.output.contains("configuration error") && process.output.contains(variable),
                    "\(service): \(process.output.suffix(600))")
        }
    }
}
