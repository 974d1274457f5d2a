// A small producer/consumer pair built on the real messaging, outbox and service kit, for
// the multi-process durability tests (kill -9, restart, catch up).
//
//   chronir-testpeer produce [--count N] [--no-relay]   (env: DATABASE_URL, CHRONIR_RPC_BIND, CHRONIR_PUB_BIND)
//   chronir-testpeer consume                            (env: DATABASE_URL, PEER_RPC, PEER_EVENTS,
//                                                         CHRONIR_FAILPOINT_KILL_BEFORE_CHECKPOINT=producer:<n>)
import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO
import ServiceKit

struct Numbered: Codable, Sendable { var n: Int }

/// The peer's one-event stream.
enum ProducerEvents: EventCatalogue {
    static let stream = "producer"
    static let numbered = TypedEvent<Numbered>("producer.numbered")
    static let all: [any EventType] = [numbered]
}

let arguments = CommandLine.arguments.dropFirst()
let mode = arguments.first ?? "help"
let count = arguments.firstIndex(of: "--count").flatMap { Int(arguments[$0 + 1]) } ?? 0
let noRelay = arguments.contains("--no-relay")

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
                try await outbox.writer.append(ProducerEvents.numbered, Numbered(n: first + k + 1), actor: nil, on: connection)
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
    env["CHRONIR_OPS_PORT"] = "0"
    let runtime = try ServiceRuntime(service: "consumer", environment: ServiceEnvironment(env))
    let migrations = [OutboxSchema.migration, Migration(2, "applied", [
        "CREATE TABLE applied (seq bigint NOT NULL, event_id text NOT NULL, n int NOT NULL, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())",
    ])]
    try await ServiceHost.run(runtime: runtime, migrations: migrations) { runtime, database, parts in
        var parts = parts
        var handlers = EventHandlers(ProducerEvents.self)
        handlers.on(ProducerEvents.numbered) { payload, context, connection in
            try await connection.query("""
                INSERT INTO applied (seq, event_id, n) VALUES (\(context.event.seq), \(context.envelope.id), \(payload.n))
                """, logger: context.logger)
        }
        let replay = runtime.owning(try RPCClient(context: runtime.zmq, target: "producer", endpoints: runtime.environment.list("PEER_RPC", []),
                                                   source: runtime.source, telemetry: runtime.telemetry), "replay client") { await $0.close() }
        // The rows have no unique key: an event applied twice would show as two rows.
        let applier = PostgresEventApplier(database: database, handlers: handlers, telemetry: runtime.telemetry, consumerName: "consumer",
                                           crashBeforeCheckpoint: try runtime.crashFailpoint(stream: "producer"))
        let consumer = StreamConsumer(stream: "producer", applier: applier, replaySource: RPCReplaySource(client: replay), telemetry: runtime.telemetry)
        let subscriber = try EventSubscriber(context: runtime.zmq, name: "producer", endpoints: runtime.environment.list("PEER_EVENTS", []),
                                             consumers: [consumer], telemetry: runtime.telemetry)
        parts.services.append(subscriber)
        runtime.logger.notice("consumer ready")
        return parts
    }
default:
    FileHandle.standardError.write(Data("usage: chronir-testpeer produce [--count N] [--no-relay] | consume\n".utf8))
    exit(2)
}
