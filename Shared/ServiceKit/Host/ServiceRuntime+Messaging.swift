import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO

extension ServiceRuntime {
    /// The request server of this service, answering `system.health` besides `router`.
    /// `maxFrameBytes` raises the message limit (`CHRONIR_MAX_MESSAGE_BYTES`) for a service
    /// whose requests are larger (alarms' photos).
    public func makeRPCServer(router: RPCRouter, health: HealthChecks, binds: [String]? = nil, maxFrameBytes: Int? = nil) throws -> RPCServer {
        var router = router
        router.on(SystemMethods.Health.self) { [self] _, _ in await health.report(runtime: self) }
        router.on(SystemMethods.ReloadBusKeys.self) { [self] _, _ in
            .init(trusted: try BusKeys.reload(principal: name, environment: environment, context: zmq, logger: logger,
                                              deferringOwnKey: .milliseconds(200)))
        }
        if let database = health.database {
            router.on(SystemMethods.UserTraces.self) { [name] req, _ in
                UserTracesReport(service: name, rows: try await UserTraces.find(req.uid, in: database))
            }
            router.on(SystemMethods.Streams.self) { [name, consumers] _, _ in
                var report = try await StreamPositions.read(service: name, in: database)
                report.blocked = consumers.blocked
                return report
            }
            OperatorRequests.register(in: &router, consumers: consumers, database: database, logger: logger)
        }
        let service = ServiceDirectory.Name(rawValue: name)
        let bind = binds ?? service.map { directory.rpcBind(for: $0) } ?? config.messaging.rpcBind
        return try RPCServer(context: zmq, serviceName: name, instance: instance, binds: bind, router: router,
                             telemetry: telemetry, maxFrameBytes: maxFrameBytes ?? self.maxFrameBytes,
                             maxConcurrent: config.messaging.rpcConcurrency,
                             maxPerActor: config.messaging.rpcConcurrencyPerAccount,
                             translate: Self.databaseOutage, callerSends: rpcCallerSends)
    }

    /// A database outage answered as `CA022` with `retryAfterSeconds` (the gateway's 503 and
    /// `Retry-After`); the service keeps running and the pool reconnects by itself.
    /// A statement cancelled by `CHRONIR_DB_STATEMENT_TIMEOUT` (57014) is answered the same way:
    /// the database is there but did not answer in time.
    @Sendable static func databaseOutage(_ error: any Error) -> ServiceError? {
        if let e = error as? PSQLError, e.serverInfo?[.sqlState] == "57014" {
            return ServiceError(.serviceUnavailable, "the database did not answer in time; retry shortly",
                                details: .object(["retryAfterSeconds": .number(2)]))
        }
        guard DatabaseAvailability.isOutage(error) else { return nil }
        return ServiceError(.serviceUnavailable, "the database is unreachable; retry shortly",
                            details: .object(["retryAfterSeconds": .number(2)]))
    }

    /// The outbox of this service's stream, published on a bound PUB socket (closed by the
    /// runtime at the end); registers `events.replay` on `router`. Add the relay to the parts.
    public func makePublishedOutbox(database: Database, router: inout RPCRouter, binds: [String]? = nil) throws
        -> (writer: OutboxWriter, relay: OutboxRelay) {
        let service = ServiceDirectory.Name(rawValue: name)
        let bind = binds ?? service.map { directory.pubBind(for: $0) } ?? config.messaging.pubBind
        let pub = owning(try PubEventSink(context: zmq, name: name, binds: bind), "event publisher") { await $0.close() }
        let outbox = try makeOutbox(database: database, sink: pub, router: &router)
        return (outbox.writer, outbox.relay)
    }

    /// The outbox of this service's stream with any sink; registers `events.replay`.
    public func makeOutbox(database: Database, sink: any EventSink, router: inout RPCRouter) throws
        -> (writer: OutboxWriter, relay: OutboxRelay) {
        let atCommit = outboxNumbersAtCommit
        let relay = OutboxRelay(
            database: database, stream: name, sink: sink, telemetry: telemetry,
            pollInterval: config.outbox.poll, heartbeatInterval: config.outbox.heartbeat,
            retention: config.outbox.retention, cleanupInterval: config.outbox.cleanupInterval,
            numbersAtCommit: atCommit
        )
        OutboxReplay.register(in: &router, database: database, streams: [name])
        let writer = OutboxWriter(stream: name, source: source, telemetry: telemetry, database: database, relay: relay,
                                  numbersAtCommit: atCommit)
        return (writer, relay)
    }

    /// A subscriber to another service's published stream, applying `handlers` into this
    /// service's database exactly once. Add it to the parts (its replay client is the runtime's).
    /// `wakes`: this service's outbox, when the handlers write events into it.
    public func makeSubscriber(to producer: ServiceDirectory.Name, handlers: EventHandlers, database: Database,
                               wakes outbox: OutboxWriter? = nil) throws -> (subscriber: EventSubscriber, replay: RPCClient) {
        let (consumer, replay) = try makeConsumer(of: producer, handlers: handlers, database: database, wakes: outbox)
        let subscriber = try EventSubscriber(context: zmq, name: producer.rawValue, endpoints: directory.events(producer),
                                             consumers: [consumer], telemetry: telemetry)
        return (subscriber, replay)
    }

    /// A subscriber to a stream its producer pushes (`events.push`, e.g. the scaled scheduler):
    /// registered in `router`, replaying gaps from any of the producer's replicas.
    public func makePushedSubscriber(to producer: ServiceDirectory.Name, handlers: EventHandlers, database: Database,
                                     router: inout RPCRouter, wakes outbox: OutboxWriter? = nil) throws
        -> (subscriber: EventSubscriber, replay: RPCClient) {
        let (consumer, replay) = try makeConsumer(of: producer, handlers: handlers, database: database, wakes: outbox)
        let subscriber = try EventSubscriber(context: zmq, name: producer.rawValue, endpoints: [], consumers: [consumer],
                                             telemetry: telemetry)
        subscriber.register(in: &router)
        return (subscriber, replay)
    }

    /// The exactly-once consumer of `producer`'s stream and the client its replays go through.
    private func makeConsumer(of producer: ServiceDirectory.Name, handlers: EventHandlers, database: Database,
                              wakes outbox: OutboxWriter?) throws -> (StreamConsumer, RPCClient) {
        try handlers.checkChoices(for: producer.rawValue)
        guard StreamReaders.lists(name, asReaderOf: producer.rawValue) else {
            throw ServiceEnvironment.Invalid("\(name) subscribes to stream \(producer.rawValue) but is not one of its readers (StreamReaders)")
        }
        let replay = try rpcClient(to: producer)
        let applier = PostgresEventApplier(database: database, handlers: handlers, telemetry: telemetry, consumerName: name,
                                           crashBeforeCheckpoint: crashFailpoint(stream: producer.rawValue),
                                           idleTimeout: consumerIdleTimeout(),
                                           afterCommit: { outbox?.committed() })
        let consumer = StreamConsumer(stream: producer.rawValue, applier: applier, replaySource: RPCReplaySource(client: replay),
                                      telemetry: telemetry, poisonAttempts: poisonAttempts(), silence: consumerSilence())
        consumers.add(consumer, applier: applier)
        return (consumer, replay)
    }

    /// How long a consumer hears nothing from its producer before it asks it
    /// (`CHRONIR_CONSUMER_SILENCE`, default 10 s; 0 never). Relays send a heartbeat a second.
    public func consumerSilence() -> Duration? {
        config.consumers.silence
    }

    /// How many times a consumer tries an event whose handler fails deterministically before it
    /// records it as a dead letter (`CHRONIR_POISON_ATTEMPTS`, default 10: about 20 s of retries).
    public func poisonAttempts() -> Int {
        config.consumers.poisonAttempts
    }

    /// The fault tests' failpoint for `stream`, from `CHRONIR_FAILPOINT_KILL_BEFORE_CHECKPOINT`
    /// (`<stream>:<n>`: SIGKILL the n-th time events of that stream were applied and their
    /// checkpoint is not yet written); nil when unset or for another stream.
    /// `CHRONIR_FAILPOINT_STOP_BEFORE_CHECKPOINT` (same form) SIGSTOPs instead: the process
    /// freezes holding the checkpoint's row lock.
    public func crashFailpoint(stream: String) -> CrashFailpoint? {
        guard let point = config.consumers.checkpointFailpoints.first(where: { $0.stream == stream }) else { return nil }
        let name = point.signal == SIGKILL ? "SIGKILL" : "SIGSTOP"
        logger.warning("failpoint armed: \(name) before the checkpoint of the \(stream) stream, application \(point.after)")
        return CrashFailpoint(after: point.after, signal: point.signal)
    }

    /// How long a consumer's transaction may sit idle holding its checkpoint's lock
    /// (`CHRONIR_CONSUMER_IDLE_TIMEOUT`, default 10 s; see ``PostgresEventApplier``).
    public func consumerIdleTimeout() -> Duration {
        config.consumers.idleTimeout
    }
}
