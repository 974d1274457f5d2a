import Foundation
import Messaging
import NIOCore

/// The settings every service process shares, typed and checked at once when the process
/// starts (``ServiceRuntime/init(service:environment:principal:)``), before anything connects:
/// a bad value stops the start with status 2 and the variable's name, as a bad setting of the
/// service's own `<S>Config` does. The parts read their values from here, never from the
/// environment, so no shared setting is found wrong only once the database answered.
///
/// The bus keys (``BusKeys``), logging (``LogSetup``) and tracing (`CHRONIR_TRACE_FILE`,
/// `OTEL_*`) are read by the objects they make, at the same moment, with the same rule.
public struct RuntimeConfig: Sendable, Equatable {
    /// How a service's requests and streams travel.
    public struct Messaging: Sendable, Equatable {
        /// Largest message accepted (`CHRONIR_MAX_MESSAGE_BYTES`, default 1 MiB).
        public var maxFrameBytes = 1 << 20
        /// The layout requests are sent in (`CHRONIR_RPC_FRAME`, `binary` or `json`).
        public var rpcFrame = EnvelopeFrame.binary
        /// Send on the caller's thread when the socket is idle (`CHRONIR_RPC_CALLER_SENDS`).
        public var rpcCallerSends = true
        /// A call to another service inside a transaction (`CHRONIR_CALLS_IN_TRANSACTIONS`).
        public var callsInTransactions = TransactionCallPolicy.warn
        /// Requests handled at once (`CHRONIR_RPC_CONCURRENCY`, default 512).
        public var rpcConcurrency = 512
        /// Requests handled at once for one account (`CHRONIR_RPC_CONCURRENCY_PER_ACCOUNT`, 64; 0 no cap).
        public var rpcConcurrencyPerAccount = 64
        /// Where the request server binds when the directory names no place (`CHRONIR_RPC_BIND`).
        public var rpcBind = ["tcp://127.0.0.1:7100"]
        /// Where the event publisher binds when the directory names no place (`CHRONIR_PUB_BIND`).
        public var pubBind = ["tcp://127.0.0.1:7200"]
        /// ZeroMQ I/O threads (`CHRONIR_ZMQ_IO_THREADS`, default 1).
        public var zmqIOThreads = 1
        public init() {}
    }

    /// The outbox and its relay.
    public struct Outbox: Sendable, Equatable {
        /// Number a transaction's events by its last statement (`CHRONIR_OUTBOX_NUMBER_AT_COMMIT`).
        public var numbersAtCommit = true
        /// How often the relay looks for rows no commit woke it for (`CHRONIR_OUTBOX_POLL`, 250 ms).
        public var poll: Duration = .milliseconds(250)
        /// The relay's heartbeat to consumers (`CHRONIR_OUTBOX_HEARTBEAT`, 1 s).
        public var heartbeat: Duration = .seconds(1)
        /// How long published events are kept for replays (`CHRONIR_OUTBOX_RETENTION`, 7 days).
        public var retention: Duration = .seconds(7 * 86_400)
        /// How often old events are deleted (`CHRONIR_OUTBOX_CLEANUP_INTERVAL`, 1 h).
        public var cleanupInterval: Duration = .seconds(3600)
        public init() {}
    }

    /// The stream consumers.
    public struct Consumers: Sendable, Equatable {
        /// Silence after which a consumer asks its producer (`CHRONIR_CONSUMER_SILENCE`, 10 s; nil never).
        public var silence: Duration? = .seconds(10)
        /// How long a consumer's transaction may sit idle (`CHRONIR_CONSUMER_IDLE_TIMEOUT`, 10 s).
        public var idleTimeout: Duration = .seconds(10)
        /// Tries of a failing event before it is a dead letter (`CHRONIR_POISON_ATTEMPTS`, 10).
        public var poisonAttempts = 10
        /// The fault tests' failpoints before a checkpoint, at most one per signal
        /// (`CHRONIR_FAILPOINT_KILL_BEFORE_CHECKPOINT` / `_STOP_`, `<stream>:<n>`).
        public var checkpointFailpoints: [CheckpointFailpoint] = []
        public init() {}
    }

    /// `<stream>:<n>`: a signal to this process the n-th time events of `stream` were applied
    /// and their checkpoint is not yet written.
    public struct CheckpointFailpoint: Sendable, Equatable {
        /// The setting that armed it.
        public var setting: String
        /// The stream it watches.
        public var stream: String
        /// Which application sends the signal (1 = the first).
        public var after: Int
        /// `SIGKILL` or `SIGSTOP`.
        public var signal: Int32

        public init(setting: String, stream: String, after: Int, signal: Int32) {
            self.setting = setting
            self.stream = stream
            self.after = after
            self.signal = signal
        }
    }

    /// The database connection's timings (the address is ``DatabaseConfig``'s).
    public struct DatabaseTimings: Sendable, Equatable {
        /// Giving up on a connection attempt (`CHRONIR_DB_CONNECT_TIMEOUT`, 10 s).
        public var connectTimeout: Duration = .seconds(10)
        /// A statement's longest run (`CHRONIR_DB_STATEMENT_TIMEOUT`, 300 s; nil none, `0`).
        public var statementTimeout: Duration? = .seconds(300)
        /// How often the availability probe asks (`CHRONIR_DB_PROBE_INTERVAL`, 1 s).
        public var probeInterval: Duration = .seconds(1)
        /// How long a probe waits (`CHRONIR_DB_PROBE_TIMEOUT`, 2 s).
        public var probeTimeout: Duration = .seconds(2)
        public init() {}
    }

    /// The operations endpoint.
    public struct Ops: Sendable, Equatable {
        /// Its port (`CHRONIR_OPS_PORT`; nil: the directory's for the service; 0 off).
        public var port: Int?
        /// Its address (`CHRONIR_OPS_HOST`, `0.0.0.0`).
        public var host = "0.0.0.0"
        /// Idle connections closed after (`CHRONIR_OPS_IDLE_TIMEOUT`, 30 s).
        public var idleTimeout: Duration = .seconds(30)
        public init() {}
    }

    /// `CHRONIR_INSTANCE_ID`, when set.
    public var instanceID: String?
    /// Event loops for PostgreSQL, HTTP servers and clients (`CHRONIR_EVENT_LOOPS`, the cores).
    public var eventLoops: Int
    /// The share of root spans kept (`CHRONIR_TRACE_SAMPLE`, 1).
    public var traceSample = 1.0
    /// How long the parts have to stop gracefully (`CHRONIR_SHUTDOWN_GRACE`, 10 s).
    public var shutdownGrace: Duration = .seconds(10)
    /// Rows per page of a data export (`CHRONIR_EXPORT_PAGE_SIZE`, 200).
    public var exportPageSize = 200
    public var messaging = Messaging()
    public var outbox = Outbox()
    public var consumers = Consumers()
    public var database = DatabaseTimings()
    public var ops = Ops()

    /// The defaults, with `eventLoops` loops.
    public init(eventLoops: Int) {
        self.eventLoops = eventLoops
    }

    /// Reads and checks every shared setting; throws ``ServiceEnvironment/Invalid`` naming the
    /// first bad one.
    public init(environment e: ServiceEnvironment, cores: Int = System.coreCount) throws {
        self.init(eventLoops: min(max(cores, 1), 64))
        instanceID = e.optional("CHRONIR_INSTANCE_ID")
        eventLoops = try e.int("CHRONIR_EVENT_LOOPS", eventLoops, in: 1...64)
        traceSample = try e.ratio("CHRONIR_TRACE_SAMPLE", 1)
        shutdownGrace = try e.duration("CHRONIR_SHUTDOWN_GRACE", shutdownGrace)
        exportPageSize = try e.int("CHRONIR_EXPORT_PAGE_SIZE", exportPageSize, in: 1...1000)
        messaging = try Self.messaging(e)
        outbox.numbersAtCommit = try e.bool("CHRONIR_OUTBOX_NUMBER_AT_COMMIT", true)
        outbox.poll = try e.duration("CHRONIR_OUTBOX_POLL", outbox.poll)
        outbox.heartbeat = try e.duration("CHRONIR_OUTBOX_HEARTBEAT", outbox.heartbeat)
        outbox.retention = try e.duration("CHRONIR_OUTBOX_RETENTION", outbox.retention)
        outbox.cleanupInterval = try e.duration("CHRONIR_OUTBOX_CLEANUP_INTERVAL", outbox.cleanupInterval)
        consumers = try Self.consumers(e)
        let statement = try e.duration("CHRONIR_DB_STATEMENT_TIMEOUT", .seconds(300))
        database.statementTimeout = statement > .zero ? statement : nil
        database.connectTimeout = try e.duration("CHRONIR_DB_CONNECT_TIMEOUT", database.connectTimeout)
        database.probeInterval = try e.duration("CHRONIR_DB_PROBE_INTERVAL", database.probeInterval)
        database.probeTimeout = try e.duration("CHRONIR_DB_PROBE_TIMEOUT", database.probeTimeout)
        ops.port = try e.optional("CHRONIR_OPS_PORT").map { _ in try e.int("CHRONIR_OPS_PORT", 0, in: 0...65535) }
        ops.host = e.string("CHRONIR_OPS_HOST", ops.host)
        ops.idleTimeout = try e.duration("CHRONIR_OPS_IDLE_TIMEOUT", ops.idleTimeout)
    }

    private static func messaging(_ e: ServiceEnvironment) throws -> Messaging {
        var m = Messaging()
        m.maxFrameBytes = try e.int("CHRONIR_MAX_MESSAGE_BYTES", m.maxFrameBytes, in: 1024...(256 << 20))
        let frame = e.string("CHRONIR_RPC_FRAME", EnvelopeFrame.binary.rawValue)
        guard let rpcFrame = EnvelopeFrame(rawValue: frame) else {
            throw ServiceEnvironment.Invalid("CHRONIR_RPC_FRAME=\"\(frame)\" must be binary or json")
        }
        m.rpcFrame = rpcFrame
        m.rpcCallerSends = try e.bool("CHRONIR_RPC_CALLER_SENDS", true)
        let calls = e.string("CHRONIR_CALLS_IN_TRANSACTIONS", TransactionCallPolicy.warn.rawValue)
        guard let policy = TransactionCallPolicy(rawValue: calls) else {
            throw ServiceEnvironment.Invalid("CHRONIR_CALLS_IN_TRANSACTIONS=\"\(calls)\" must be warn or refuse")
        }
        m.callsInTransactions = policy
        m.rpcConcurrency = try e.int("CHRONIR_RPC_CONCURRENCY", m.rpcConcurrency, in: 1...100_000)
        m.rpcConcurrencyPerAccount = try e.int("CHRONIR_RPC_CONCURRENCY_PER_ACCOUNT", m.rpcConcurrencyPerAccount, in: 0...100_000)
        m.rpcBind = e.list("CHRONIR_RPC_BIND", m.rpcBind)
        m.pubBind = e.list("CHRONIR_PUB_BIND", m.pubBind)
        m.zmqIOThreads = try e.int("CHRONIR_ZMQ_IO_THREADS", 1, in: 1...16)
        return m
    }

    private static func consumers(_ e: ServiceEnvironment) throws -> Consumers {
        var c = Consumers()
        let silence = try e.duration("CHRONIR_CONSUMER_SILENCE", .seconds(10))
        c.silence = silence > .zero ? silence : nil
        c.idleTimeout = try e.duration("CHRONIR_CONSUMER_IDLE_TIMEOUT", c.idleTimeout)
        c.poisonAttempts = try e.int("CHRONIR_POISON_ATTEMPTS", c.poisonAttempts, in: 1...1000)
        for (key, signal) in [("CHRONIR_FAILPOINT_KILL_BEFORE_CHECKPOINT", SIGKILL), ("CHRONIR_FAILPOINT_STOP_BEFORE_CHECKPOINT", SIGSTOP)] {
            guard let spec = e.optional(key) else { continue }
            let parts = spec.split(separator: ":")
            guard parts.count == 2, !parts[0].isEmpty, let n = Int(parts[1]), n >= 1 else {
                throw ServiceEnvironment.Invalid("\(key)=\(spec): expected <stream>:<n> with n ≥ 1")
            }
            c.checkpointFailpoints.append(CheckpointFailpoint(setting: key, stream: String(parts[0]), after: n, signal: signal))
        }
        return c
    }
}
