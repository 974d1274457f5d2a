// A small producer/consumer pair built on the real messaging, outbox and service kit, for
// the multi-process durability tests (kill -9, restart, catch up).
//
//   chronir-testpeer produce [--count N] [--no-relay] [--version V] [--type numbered|noted] [--pad BYTES]
//                            (env: DATABASE_URL, CHRONIR_RPC_BIND, CHRONIR_PUB_BIND)
//   chronir-testpeer consume [--reads 1|2]
//                            (env: DATABASE_URL, PEER_RPC, PEER_EVENTS, PEER_OPS_PORT, PEER_CONSUMER_RPC,
//                             CHRONIR_FAILPOINT_KILL_BEFORE_CHECKPOINT=producer:<n>)
//
// The rolling-upgrade test plays two releases with one binary: `--reads 1` is the previous
// release (it knows `producer.numbered` version 1 only), `--reads 2` the next one (version 2 of
// `producer.numbered`, and the new type `producer.noted`); `produce --version 2 --type noted`
// is a producer upgraded first.
import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO
import ServiceKit

struct Numbered: Codable, Sendable {
    var n: Int
    /// Version 2 only.
    var label: String?
    /// Bulk (`produce --pad N`): large events, with characters JSON escapes.
    var pad: String?
}

/// The peer's stream as the previous release knows it: one type, version 1.
enum ProducerEvents: EventCatalogue {
    static let stream = "producer"
    static let numbered = TypedEvent<Numbered>("producer.numbered")
    static let all: [any EventType] = [numbered]
}

/// The peer's stream as the next release knows it: `numbered` version 2 and a new type.
enum ProducerEventsV2: EventCatalogue {
    static let stream = "producer"
    static let numbered = TypedEvent<Numbered>("producer.numbered", version: 2)
    static let noted = TypedEvent<Numbered>("producer.noted")
    static let all: [any EventType] = [numbered, noted]
}

func option(_ name: String) -> String? {
    CommandLine.arguments.firstIndex(of: name).flatMap { $0 + 1 < CommandLine.arguments.count ? CommandLine.arguments[$0 + 1] : nil }
}

let arguments = CommandLine.arguments.dropFirst()
let mode = arguments.first ?? "help"
let count = arguments.firstIndex(of: "--count").flatMap { Int(arguments[$0 + 1]) } ?? 0
let noRelay = arguments.contains("--no-relay")
let version = option("--version").flatMap(Int.init) ?? 1
let reads = option("--reads").flatMap(Int.init) ?? 1

switch mode {
case "produce":
    var env = ProcessInfo.processInfo.environment
    env["CHRONIR_DB_SCHEMA"] = env["CHRONIR_DB_SCHEMA"] ?? "producer"
    env["CHRONIR_OPS_PORT"] = "0"
    let runtime = try ServiceRuntime(service: "producer", environment: ServiceEnvironment(env))
    try await ServiceHost.run(runtime: runtime, migrations: [OutboxSchema.migration]) { runtime, database, parts in
        var parts = parts
        var router = RPCRouter()
        let outbox = try runtime.makePublishedOutbox(database: database, router: &router)
        let first = try await database.query("SELECT count(*)::int FROM outbox").first(Int.self) ?? 0
        for k in 0..<count {
            try await database.transaction { connection in
                let n = first + k + 1
                let event = option("--type") == "noted" ? ProducerEventsV2.noted : ProducerEventsV2.numbered
                let pad = option("--pad").flatMap(Int.init).map { String(repeating: "a\"/", count: $0 / 3) }
                try await outbox.writer.append(event, Numbered(n: n, label: version >= 2 ? "n\(n)" : nil, pad: pad), actor: nil,
                                               version: version, on: connection)
            }
        }
        runtime.logger.notice("appended \(count) events")
        if noRelay {
            // Simulates a crash after the commit and before anything was published.
            exit(0)
        }
        parts.services.append(outbox.relay)
        parts.services.append(try runtime.makeRPCServer(router: router, health: parts.health))
        return parts
    }
case "consume":
    var env = ProcessInfo.processInfo.environment
    env["CHRONIR_DB_SCHEMA"] = env["CHRONIR_DB_SCHEMA"] ?? "consumer"
    env["CHRONIR_OPS_PORT"] = env["PEER_OPS_PORT"] ?? "0"
    let runtime = try ServiceRuntime(service: "consumer", environment: ServiceEnvironment(env))
    let migrations = [OutboxSchema.migration, Migration(2, "applied", [
        "CREATE TABLE applied (seq bigint NOT NULL, event_id text NOT NULL, n int NOT NULL, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())",
    ])]
    try await ServiceHost.run(runtime: runtime, migrations: migrations) { runtime, database, parts in
        var parts = parts
        let insert: @Sendable (Numbered, EventContext, PostgresConnection) async throws -> Void = { payload, context, connection in
            try await connection.query("""
                INSERT INTO applied (seq, event_id, n) VALUES (\(context.event.seq), \(context.envelope.id), \(payload.n))
                """, logger: context.logger)
        }
        var handlers = EventHandlers(ProducerEvents.self)
        handlers.on(ProducerEvents.numbered, insert)
        if reads >= 2 {
            handlers = EventHandlers(ProducerEventsV2.self)
            handlers.on(ProducerEventsV2.numbered, insert)
            handlers.on(ProducerEventsV2.noted, insert)
        }
        let replay = runtime.owning(try RPCClient(context: runtime.zmq, target: "producer", endpoints: runtime.environment.list("PEER_RPC", []),
                                                   source: runtime.source, telemetry: runtime.telemetry), "replay client") { await $0.close() }
        // The rows have no unique key: an event applied twice would show as two rows.
        let applier = PostgresEventApplier(database: database, handlers: handlers, telemetry: runtime.telemetry, consumerName: "consumer",
                                           crashBeforeCheckpoint: runtime.crashFailpoint(stream: "producer"),
                                           idleTimeout: runtime.consumerIdleTimeout())
        let consumer = StreamConsumer(stream: "producer", applier: applier, replaySource: RPCReplaySource(client: replay), telemetry: runtime.telemetry,
                                      blockedPoll: .milliseconds(200), poisonAttempts: runtime.poisonAttempts(),
                                      silence: runtime.consumerSilence())
        runtime.consumers.add(consumer, applier: applier)
        if let bind = runtime.environment.optional("PEER_CONSUMER_RPC") {
            parts.services.append(try runtime.makeRPCServer(router: RPCRouter(), health: parts.health, binds: [bind]))
        }
        let subscriber = try EventSubscriber(context: runtime.zmq, name: "producer", endpoints: runtime.environment.list("PEER_EVENTS", []),
                                             consumers: [consumer], telemetry: runtime.telemetry)
        parts.services.append(subscriber)
        runtime.logger.notice("consumer ready", metadata: ["reads": "\(reads)"])
        return parts
    }
default:
    FileHandle.standardError.write(Data("usage: chronir-testpeer produce [--count N] [--no-relay] [--version V] [--type numbered|noted] [--pad BYTES] | consume [--reads 1|2]\n".utf8))
    exit(2)
}
