import Foundation
import Messaging
import ServiceKit
import Testing

/// ``RuntimeConfig``: every shared setting read at once, its defaults, and a bad value named.
@Suite("The shared settings are one typed value")
struct RuntimeConfigTests {
    @Test("unset: the documented defaults")
    func defaults() throws {
        let config = try RuntimeConfig(environment: ServiceEnvironment([:]), cores: 2)
        #expect(config == RuntimeConfig(eventLoops: 2))
        #expect(config.shutdownGrace == .seconds(10))
        #expect(config.database.statementTimeout == .seconds(300))
        #expect(config.consumers.silence == .seconds(10))
        #expect(config.ops.port == nil)
        #expect(config.messaging.rpcFrame == .binary)
    }

    @Test("set: each value where the parts read it; 0 turns the statement timeout and the silence off")
    func values() throws {
        let config = try RuntimeConfig(environment: ServiceEnvironment([
            "CHRONIR_SHUTDOWN_GRACE": "3s", "CHRONIR_DB_STATEMENT_TIMEOUT": "0", "CHRONIR_CONSUMER_SILENCE": "0",
            "CHRONIR_OPS_PORT": "0", "CHRONIR_RPC_FRAME": "json", "CHRONIR_EVENT_LOOPS": "3",
            "CHRONIR_OUTBOX_POLL": "50ms", "CHRONIR_FAILPOINT_STOP_BEFORE_CHECKPOINT": "alarms:2",
            "CHRONIR_CALLS_IN_TRANSACTIONS": "refuse", "CHRONIR_RPC_BIND": "tcp://a:1, tcp://b:2",
        ]), cores: 2)
        #expect(config.shutdownGrace == .seconds(3))
        #expect(config.database.statementTimeout == nil)
        #expect(config.consumers.silence == nil)
        #expect(config.ops.port == 0)
        #expect(config.messaging.rpcFrame == .json)
        #expect(config.eventLoops == 3)
        #expect(config.outbox.poll == .milliseconds(50))
        #expect(config.consumers.checkpointFailpoints == [.init(setting: "CHRONIR_FAILPOINT_STOP_BEFORE_CHECKPOINT",
                                                                 stream: "alarms", after: 2, signal: SIGSTOP)])
        #expect(config.messaging.callsInTransactions == .refuse)
        #expect(config.messaging.rpcBind == ["tcp://a:1", "tcp://b:2"])
    }

    @Test("a bad value is refused naming its variable", arguments: [
        ("CHRONIR_SHUTDOWN_GRACE", "soon"), ("CHRONIR_EVENT_LOOPS", "0"), ("CHRONIR_TRACE_SAMPLE", "2"),
        ("CHRONIR_RPC_FRAME", "xml"), ("CHRONIR_CALLS_IN_TRANSACTIONS", "maybe"), ("CHRONIR_OPS_PORT", "-1"),
        ("CHRONIR_EXPORT_PAGE_SIZE", "1001"), ("CHRONIR_POISON_ATTEMPTS", "0"), ("CHRONIR_DB_PROBE_INTERVAL", "x"),
        ("CHRONIR_FAILPOINT_KILL_BEFORE_CHECKPOINT", "alarms:0"), ("CHRONIR_FAILPOINT_KILL_BEFORE_CHECKPOINT", ":3"),
        ("CHRONIR_MAX_MESSAGE_BYTES", "10"), ("CHRONIR_OUTBOX_NUMBER_AT_COMMIT", "perhaps"),
    ])
    func refused(variable: String, value: String) {
        do {
            _ = try RuntimeConfig(environment: ServiceEnvironment([variable: value]), cores: 2)
            Issue.record("\(variable)=\(value) was taken")
        } catch {
            #expect("\(error)".contains(variable), "\(error)")
        }
    }
}
