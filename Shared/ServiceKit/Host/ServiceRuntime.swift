import BuildInfo
import Foundation
import ServiceLifecycle
import Logging
import Messaging
import NIOCore
import NIOPosix
import Prometheus
import Synchronization
import Tracing
import ZMQ

/// Everything a service process shares, built once at start from the environment and passed
/// down (no globals): identity, configuration, logging, metrics, tracing, the ZeroMQ context
/// and the event loops.
public final class ServiceRuntime: Sendable {
    /// The service name, e.g. `alarms`.
    public let name: String
    /// A unique id of this process: `CHRONIR_INSTANCE_ID`, or host name + pid + random
    /// (unique per container replica with no configuration).
    public let instance: String
    /// The environment.
    public let environment: ServiceEnvironment
    /// Where the services listen.
    public let directory: ServiceDirectory
    /// Logging setup.
    public let logs: LogSetup
    /// The root logger.
    public let logger: Logger
    /// The Prometheus registry behind this process's metrics.
    public let metricsRegistry: PrometheusCollectorRegistry
    /// Logger, metrics and tracer for messaging code.
    public let telemetry: Telemetry
    /// The ZeroMQ context.
    public let zmq: ZMQContext
    /// Event loops for PostgreSQL, HTTP servers and clients.
    public let eventLoopGroup: MultiThreadedEventLoopGroup
    /// The shared settings, read and checked at start.
    public let config: RuntimeConfig
    /// Largest message accepted (`CHRONIR_MAX_MESSAGE_BYTES`, default 1 MiB).
    public var maxFrameBytes: Int { config.messaging.maxFrameBytes }
    /// The layout this process sends requests in (`CHRONIR_RPC_FRAME`: `binary`, the default,
    /// or `json` while servers older than the binary layout still run).
    public var rpcFrame: EnvelopeFrame { config.messaging.rpcFrame }
    /// Whether RPC clients and servers send on the calling task's thread when their socket is
    /// idle (`CHRONIR_RPC_CALLER_SENDS`, default true; ``SocketOptions/callerSends``).
    public var rpcCallerSends: Bool { config.messaging.rpcCallerSends }
    /// What a call to another service made inside a database transaction meets
    /// (`CHRONIR_CALLS_IN_TRANSACTIONS`: `warn`, the default, logs it; `refuse` answers CA023;
    /// ``TransactionScope``).
    public var callsInTransactions: TransactionCallPolicy { config.messaging.callsInTransactions }
    /// Whether a transaction's events are inserted numbered by its last statement
    /// (`CHRONIR_OUTBOX_NUMBER_AT_COMMIT`, default true; ``OutboxWriter/numbersAtCommit``).
    public var outboxNumbersAtCommit: Bool { config.outbox.numbersAtCommit }
    /// When the process started.
    public let startedAt = Date()
    /// The span exporter writing `CHRONIR_TRACE_FILE`, if set.
    public let spanFile: FileSpanExporter?
    /// The OTLP exporter (``OTLPSpanExporter``) when `OTEL_EXPORTER_OTLP_ENDPOINT` is set; run it
    /// first so it stops last and sends every span.
    public let otlpExporter: (any Service)?
    /// The build version (``BuildInfo/version``: `git describe` at build time), reported by
    /// health, `/livez` and the `chronir_build_info` metric.
    public let version: String
    /// This process's stream consumers (readiness, operator requests).
    public let consumers = ConsumerRegistry()
    /// What this runtime made or was given to close once the service's parts have stopped, in
    /// the order made (closed in reverse).
    private let owned = Mutex<[(name: String, close: @Sendable () async -> Void)]>([])
    private let currentPhase = Mutex("created")

    /// Where the service is in its life (`migrating`, `running`, `closing <what>`, …): what a
    /// stop that does not end names (the tests' ``RunningService``; a debug log line each).
    public var phase: String { currentPhase.withLock { $0 } }

    /// Records that the service has entered `phase`.
    public func enter(_ phase: String) {
        currentPhase.withLock { $0 = phase }
        logger.debug("phase: \(phase)")
    }

    /// Reads the environment. Throws ``ServiceEnvironment/Invalid`` naming a bad variable.
    /// `principal`: the bus identity whose key this process uses (default: `service`;
    /// `operator` for `chronirctl`).
    public init(service: String, environment: ServiceEnvironment = ServiceEnvironment(), principal: String? = nil) throws {
        self.name = service
        self.environment = environment
        try ServiceDirectory.validate(environment)
        self.directory = ServiceDirectory(environment: environment)
        let config = try RuntimeConfig(environment: environment)
        self.config = config
        self.instance = config.instanceID ?? Self.makeInstanceID()
        self.version = BuildInfo.version
        self.logs = try LogSetup(service: service, instance: instance, environment: environment)
        self.logger = logs.logger(service)
        self.metricsRegistry = PrometheusCollectorRegistry()
        let factory = PrometheusMetricsFactory(registry: metricsRegistry)
        // `{instance}` in the path stands for this replica's instance id: replicas sharing a
        // directory (compose's traces volume) each write a file of their own.
        if let path = environment.optional("CHRONIR_TRACE_FILE") {
            spanFile = try FileSpanExporter(path: path.replacingOccurrences(of: "{instance}", with: instance))
        } else {
            spanFile = nil
        }
        // The span file and OTLP together: one tracer, so both hold the same spans, with the ids
        // the log lines carry.
        let otlp = try OTLPSpanExporter.make(service: service, instance: instance, environment: environment,
                                             logger: logs.logger("tracing"))
        otlpExporter = otlp
        let exporters: [any SpanExporter] = [spanFile as (any SpanExporter)?, otlp].compactMap { $0 }
        let tracer = ChronirTracer(service: service, instance: instance,
                                   exporter: exporters.isEmpty ? nil : exporters.count == 1 ? exporters[0] : SpanExporters(exporters),
                                   rootSampleRatio: config.traceSample)
        self.telemetry = Telemetry(logger: logger, metrics: factory, tracer: tracer)
        telemetry.gauge("chronir_build_info", [("version", version), ("service", service)]).record(1)
        self.zmq = try BusKeys.context(principal: principal ?? service, environment: environment, logger: logger,
                                       ioThreads: config.messaging.zmqIOThreads)
        self.eventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: config.eventLoops)
    }

    /// `<service>/<instance>`, the `source` of messages this process sends.
    public var source: String { "\(name)/\(instance)" }

    /// A client for another service's requests; `maxFrameBytes` raises the message limit
    /// for a service that takes larger ones.
    /// The runtime closes it when the service stops.
    public func rpcClient(to service: ServiceDirectory.Name, timeout: Duration = .seconds(5), maxFrameBytes: Int? = nil) throws -> RPCClient {
        let client = try RPCClient(context: zmq, target: service.rawValue, endpoints: directory.rpc(service), source: source,
                                   telemetry: telemetry, defaultTimeout: timeout, maxFrameBytes: maxFrameBytes ?? self.maxFrameBytes,
                                   frame: rpcFrame, callerSends: rpcCallerSends, insideTransaction: callsInTransactions)
        return owning(client, "rpc client to \(service.rawValue)") { await $0.close() }
    }

    /// Hands `resource` (an HTTP client, a thread pool, a socket) to the runtime, which runs
    /// `close` on it once the service's parts have all stopped (``ServiceHost``), resources
    /// closed in the reverse order of their handing over. Returns `resource`, so it is handed
    /// over where it is made: `let http = runtime.owning(HTTPClient(…), "http") { try? await $0.shutdown() }`.
    @discardableResult
    public func owning<R: Sendable>(_ resource: R, _ name: String, close: @escaping @Sendable (R) async -> Void) -> R {
        owned.withLock { $0.append((name, { await close(resource) })) }
        return resource
    }

    /// Closes what the runtime owns, newest first (each once; later calls find nothing).
    public func closeOwned() async {
        let all = owned.withLock { o in defer { o = [] }; return o }
        for (name, close) in all.reversed() {
            enter("closing \(name)")
            await close()
        }
    }

    /// Releases the ZeroMQ context and event loops. Call after every socket is closed.
    /// A socket left open (a part that never closed it) is named in the log and the context is
    /// left unterminated after 5 s, rather than waiting forever: the process exits next.
    public func shutdown() async {
        await closeOwned()
        enter("terminating ZeroMQ")
        let left = await zmq.terminate(within: .seconds(5))
        if !left.isEmpty {
            logger.error("sockets still open at shutdown; exiting without waiting for them", metadata: ["sockets": "\(left)"])
        }
        enter("shutting down the event loops")
        try? await eventLoopGroup.shutdownGracefully()
        enter("shut down")
    }

    static func makeInstanceID() -> String {
        var rng = SystemRandomNumberGenerator()
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        return "\(host)-\(getpid())-\(String(rng.next() as UInt16, radix: 16))"
    }
}
